#include "model/ir/model.hpp"

#include <stdexcept>

namespace hw::model {

template <class T>
static std::optional<std::uint32_t> find_by_name(const std::vector<T>& list,
                                                 const std::string& name) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

std::optional<std::uint32_t> Model::find_state(const std::string& n) const {
  return find_by_name(states, n);
}
std::optional<std::uint32_t> Model::find_parameter(const std::string& n) const {
  return find_by_name(parameters, n);
}
std::optional<std::uint32_t> Model::find_algebraic(const std::string& n) const {
  return find_by_name(algebraics, n);
}

const Symbol& Model::symbol(VarKind kind, std::uint32_t index) const {
  switch (kind) {
    case VarKind::time: return time;
    case VarKind::state: return states.at(index);
    case VarKind::param: return parameters.at(index);
    case VarKind::algebraic: return algebraics.at(index);
  }
  throw std::logic_error("Model::symbol: bad kind");
}

const std::string& Model::variable_name(VarKind kind, std::uint32_t index) const {
  return symbol(kind, index).name;
}

}  // namespace hw::model

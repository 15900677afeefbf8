#include "model/jit/builtin_registry.hpp"

#include <mutex>

// Weak: resolves to null when heartwave_builtin_models is not linked into the program.
extern "C" void hw_register_all_builtin_models() __attribute__((weak));

namespace hw::model {

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<BuiltinModel>& registry() {
  static std::vector<BuiltinModel> r;
  return r;
}
void ensure_generated_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (&hw_register_all_builtin_models != nullptr) hw_register_all_builtin_models();
  });
}
}  // namespace

const std::vector<BuiltinModel>& builtin_models() {
  ensure_generated_registered();
  return registry();
}

void register_builtin(BuiltinModel model) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(std::move(model));
}

const BuiltinModel* find_builtin(const std::string& name) {
  for (const BuiltinModel& b : builtin_models())
    if (b.name == name) return &b;
  return nullptr;
}

}  // namespace hw::model

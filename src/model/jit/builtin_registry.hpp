// The built-in model library: models compiled at build time by heartwave-modelc.
//
// Why a registry with an explicit registration function: the generated sources live in
// the object library heartwave_builtin_models (models/CMakeLists.txt), which depends on
// heartwave_lib, so heartwave_lib cannot call into it directly, and static-initialiser
// self-registration in a static library is silently dropped by the linker. Instead the
// build generates one function, hw_register_all_builtin_models(), that registers every
// model; builtin_models() calls it once if the program linked it (a weak reference), so a
// program without the built-ins still links and simply sees an empty library.
#pragma once

#include <string>
#include <vector>

#include "runtime/cell_kernel.hpp"

namespace hw::model {

struct BuiltinModel {
  std::string name;         // file stem of models/NAME.hwm
  std::string hwm_source;   // the .hwm text, so the model works without the file
  std::string cpp_hash;     // model_cpp_hash() of the analysed model (see jit.hpp)
  hw::cell::CellKernel* (*make_kernel)() = nullptr;
};

// Every registered model, the generated ones first. Register at start-up only: the
// returned list is not guarded against concurrent register_builtin calls.
const std::vector<BuiltinModel>& builtin_models();
// Adds a model (the generated registration calls this; tests may too).
void register_builtin(BuiltinModel model);
// The model registered under `name`, or nullptr.
const BuiltinModel* find_builtin(const std::string& name);

}  // namespace hw::model

// Defined by the generated sources of heartwave_builtin_models (when linked).
extern "C" void hw_register_all_builtin_models();

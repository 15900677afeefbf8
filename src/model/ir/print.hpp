// Human-readable dump of the IR, for debugging passes (`heartwave model inspect --dump-ir`)
// and for test failure messages. Never used to generate code that runs.
#pragma once

#include <string>

#include "model/ir/model.hpp"

namespace hw::model {

// Infix text of one expression, with the model's variable names.
std::string to_infix(const Model& m, ExprId id);

// The whole model: states with initial values, parameters, algebraics in order, ODEs.
std::string dump(const Model& m);

}  // namespace hw::model

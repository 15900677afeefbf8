// The live view's controls: what a page may ask of a running simulation, and the checks
// every request passes before it reaches the engine.
//
// Why one pure function (parse_control) between the socket and the run: every value the
// page sends (a click's position, an amplitude, a parameter, a name) is refused here with a
// message the page shows, unless it is finite, in range and one of the case's own names, so
// a bad value never reaches the Simulation. The function touches nothing but its inputs,
// which is what tests/fuzz/fuzz_live_control.cpp fuzzes and tests/unit/test_live_controls
// checks case by case. The limits come from the case (make_control_space, live/session).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hw::live {

// A parameter the page may change while the run goes on.
struct Parameter {
  std::string name;   // "conductivity.scale", "time.dt", "model[0].scale.GKr_b"
  std::string label;  // what the page shows
  std::string unit;   // "", "ms", "×"
  double value = 1, min = 0, max = 1;  // as the run starts; the accepted range
};

// What the case allows: the domain, the stimulus limits, the parameters and the fields.
struct ControlSpace {
  std::array<double, 3> extent{0, 0, 0};  // mm: the grid's box
  double cell = 1;                        // mm: the smallest spacing
  double amplitude = 1, amplitude_max = 10;  // µA/mm³: the page's default, the most accepted
  double radius = 1, radius_max = 10;        // mm
  double duration = 2, duration_max = 50;    // ms
  long step_max = 100000;                    // single steps at once
  double speed_max = 1e6;                    // simulated ms per wall second
  std::vector<Parameter> parameters;
  std::vector<std::string> variables;  // the fields the view may show ("V" first)
};

struct Control {
  enum class Op { stimulate, pause, resume, step, speed, set, view, save, restore, probe };
  Op op = Op::pause;
  std::string id;                    // the page's message id, echoed in the reply ("" if none)
  std::array<double, 3> at{0, 0, 0};  // stimulate: the centre; probe: the point, mm
  double amplitude = 0, radius = 0, duration = 0;  // stimulate
  long count = 1;                    // step
  double value = 0;                  // speed (0: as fast as it goes), set
  std::string name;                  // set: a parameter; view: a variable; save/restore: a name
  int axis = 2;                      // view: the slice normal of a 3D case's main slice
  double position = -1;              // view: the slice position along axis, mm (< 0: middle)
};

const char* op_name(Control::Op op);

// The control in `text` (a flat JSON object, live/flat_json.hpp), checked against `space`;
// nullopt with *refusal saying what is wrong and what is accepted.
std::optional<Control> parse_control(std::string_view text, const ControlSpace& space, std::string* refusal);

// The control as one JSON object (the action log's line, without the step and time; the
// same keys parse_control reads, so the log's lines parse back).
std::string control_json(const Control& c);

}  // namespace hw::live

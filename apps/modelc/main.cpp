// heartwave-modelc: the build-time model compiler for the built-in library.
//
//   heartwave-modelc MODEL.hwm --prefix NAME [--name STEM] -o OUT.cpp
//
// Loads the .hwm, runs the pass pipeline exactly as a run-time user model gets it, and
// prints the C++ (model/emit/cpp_printer) plus a registration function
// `extern "C" void hw_builtin_register_<NAME>()` that hands the registry the model's name,
// its .hwm text (so it runs without the file), its factory and the hash make_kernel
// matches. models/CMakeLists.txt runs this for every models/*.hwm and generates the one
// function that calls every registration (see model/jit/builtin_registry.hpp).
// The output is only rewritten when it changes, so an unchanged model is not recompiled.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/identifiers.hpp"
#include "model/frontend/hwm/hwm.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hw::Error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_if_changed(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && read_text(path) == text) return;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw hw::Error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heartwave-modelc: compile a .hwm model into C++ for the built-in library"};
  std::string input, prefix, name, output;
  app.add_option("model", input, "the .hwm model")->required();
  app.add_option("--prefix", prefix, "C identifier prefix of the generated symbols")->required();
  app.add_option("--name", name, "the name the model is registered under (default: file stem)");
  app.add_option("-o,--output", output, "the C++ file to write")->required();
  CLI11_PARSE(app, argc, argv);

  try {
    if (name.empty()) name = std::filesystem::path(input).stem().string();
    const std::string hwm_text = read_text(input);
    // Exactly what load_model gives the CLI (roles, pacing control, passes), so that
    // make_kernel's hash match finds this compiled code at run time.
    hw::model::LoadedModel loaded = hw::model::load_model(input);
    for (const auto& d : loaded.notes)
      if (d.severity == hw::Severity::warning) std::cerr << d.str() << "\n";
    const hw::model::Model& m = loaded.analysed;

    hw::model::CppOptions opt;
    opt.symbol_prefix = hw::model::sanitise_identifier(prefix, 64);
    std::string text = hw::model::print_cpp(m, opt);
    text += "\n// Registration in the built-in library (model/jit/builtin_registry.hpp).\n";
    text += "#include \"model/jit/builtin_registry.hpp\"\n\n";
    text += "extern \"C\" void hw_builtin_register_" + opt.symbol_prefix + "() {\n";
    text += "  hw::model::register_builtin({" + hw::model::c_string_literal(name) + ",\n    " +
            hw::model::c_string_literal(hwm_text) + ",\n    \"" +
            hw::model::model_cpp_hash(m) + "\", &" + hw::model::cpp_factory_symbol(opt) +
            "});\n}\n";
    write_if_changed(output, text);
  } catch (const hw::InputError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << d.str() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "heartwave-modelc: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

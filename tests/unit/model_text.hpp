// A model written inline in a test (.hwm text), loaded through the ordinary pipeline.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/load.hpp"

namespace hw::test_models {

// Writes `text` to a temporary .hwm named after `tag` and this process, loads it, removes it.
inline hw::model::LoadedModel load_model_text(const std::string& text, const std::string& tag) {
  const auto path = std::filesystem::temp_directory_path() / ("hw_" + tag + "_" + std::to_string(::getpid()) + ".hwm");
  std::ofstream(path) << text;
  auto lm = hw::model::load_model(path.string());
  std::filesystem::remove(path);
  return lm;
}

}  // namespace hw::test_models

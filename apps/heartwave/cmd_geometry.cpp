// `heartwave geometry inspect FILE`: what is in a geometry image (NRRD, VTK image), so a
// user can write regions, stimuli and probes against it: sizes, spacing, origin, bounding
// box, and each label's voxel count and extent (where the apex is, which label is the LV).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "common.hpp"
#include "formats/image_summary.hpp"
#include "formats/vtk_image_reader.hpp"

namespace hw::cli {

void add_geometry_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("geometry", "Geometry images (NRRD, VTK): inspect what a case would read");
  cmd->require_subcommand(1);
  auto* inspect = cmd->add_subcommand(
      "inspect", "Dims, spacing, origin, bounding box, and each label's voxel count and extent (mm)");
  auto file = std::make_shared<std::string>();
  inspect->add_option("FILE", *file, "image: .nrrd/.nhdr, .vti or legacy .vtk")->required()->check(CLI::ExistingFile);
  inspect->footer(
      "Positions in a case file are mm from the grid corner: voxel i of an image is at (i + 0.5)·spacing\n"
      "there; the extents below are in the image's own coordinates (origin + i·spacing). docs/geometry.md\n\n"
      "Examples:\n"
      "  heartwave geometry inspect tests/data/geometry/ascii_3x2x2.nrrd\n  heartwave geometry inspect ../shared/geometry/rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd");
  inspect->callback([file, &action] {
    action = [file]() {
      for (const auto& l : io::describe_image(io::summarize_image(io::read_image(*file)))) std::cout << l << '\n';
      return 0;
    };
  });
  cmd->footer("Examples:\n  heartwave geometry inspect tests/data/geometry/ascii_3x2x2.nrrd\n  heartwave geometry inspect ../shared/geometry/rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd");
}

}  // namespace hw::cli

// probes.png, ecg.png and activation.png; see run_pictures.hpp.
#include "outputs/run_pictures.hpp"

#include <algorithm>
#include <cmath>

#include "outputs/map_picture.hpp"
#include "outputs/png_writer.hpp"
#include "outputs/trace_plot.hpp"

namespace hw::io {

void write_probes_png(const std::string& path, const std::string& csv_text, const std::vector<std::string>& probes,
                      const std::vector<tissue::VariableUnits>& variables) {
  TracePlot plot;
  std::vector<std::string> names;
  std::vector<std::vector<double>> cols;
  parse_trace_csv(csv_text, names, plot.t, cols);
  plot.title = "probes";
  plot.panel_height = variables.size() > 1 ? 200 : 260;
  for (std::size_t v = 0; v < variables.size(); ++v) {
    TracePanel panel{variables[v].label(), {}};
    for (std::size_t p = 0; p < probes.size(); ++p)
      if (const std::size_t c = v * probes.size() + p; c < cols.size())
        panel.traces.push_back({probes[p], cols[c]});
    plot.panels.push_back(std::move(panel));
  }
  write_png(path, render_trace_plot(plot));
}

void write_ecg_png(const std::string& path, const std::string& csv_text, const std::vector<std::string>& electrodes,
                   const tissue::VariableUnits& potential) {
  TracePlot plot;
  std::vector<std::string> names;
  std::vector<std::vector<double>> cols;
  parse_trace_csv(csv_text, names, plot.t, cols);
  plot.title = "pseudo-ECG";
  const std::string units = potential.units.empty() ? "" : " (" + potential.units + ")";
  TracePanel panel{"phi_e" + units, {}};
  for (std::size_t e = 0; e < electrodes.size() && e < cols.size(); ++e) panel.traces.push_back({electrodes[e], cols[e]});
  plot.panels.push_back(std::move(panel));
  write_png(path, render_trace_plot(plot));
}

void write_activation_png(const std::string& path, const tissue::Grid& g, const tissue::Field<float>& activation,
                          const tissue::Mask* mask) {
  double hi = 1;
  for (std::size_t i = 0; i < activation.size(); ++i)
    if (std::isfinite(activation[i])) hi = std::max(hi, double(activation[i]));
  MapPictureOptions o;
  o.title = "activation time";
  o.vmax = hi;
  write_png(path, render_map_picture(g, activation, mask, o));
}

}  // namespace hw::io

// Traces over time as a picture: the pseudo-ECG (ecg.png) and the probes (probes.png).
//
// Why: a CSV is for analysis, a picture for the first look after a run. One panel per
// quantity (the probes' variables have different units), time in ms across, the value with
// its units up, tick labels on both axes, light grid lines, one coloured line per probe or
// lead and a legend naming them. Gaps (NaN, e.g. a probe whose model has no such state)
// break the line.
#pragma once

#include <string>
#include <vector>

#include "outputs/image.hpp"

namespace hw::io {

struct Trace {
  std::string name;        // in the legend
  std::vector<double> y;   // one value per time of the plot
};

struct TracePanel {
  std::string y_label;     // the quantity and its units, e.g. "V (mV)"
  std::vector<Trace> traces;
};

struct TracePlot {
  std::string title;
  std::string x_label = "t (ms)";
  std::vector<double> t;   // ms, increasing
  std::vector<TracePanel> panels;
  int width = 900;         // pixels of the whole picture
  int panel_height = 260;  // pixels of each panel's plotting area
};

// Where a panel's plotting area lies and how values map onto it (for tests and legends).
struct PanelFrame {
  int x0 = 0, y0 = 0, w = 0, h = 0;  // the plotting area in pixels
  double t0 = 0, t1 = 1, v0 = 0, v1 = 1;  // the ranges it shows
  double px(double t) const { return x0 + (t - t0) / (t1 - t0) * w; }
  double py(double v) const { return y0 + h - (v - v0) / (v1 - v0) * h; }
};

// The colour of the i-th trace of a panel (Tableau 10, then repeating).
Rgb trace_colour(std::size_t i);

// The frame of each panel, as render_trace_plot draws them. Throws hw::Error when a trace
// has another length than t, or there is no panel.
std::vector<PanelFrame> trace_plot_frames(const TracePlot& p);
Image render_trace_plot(const TracePlot& p);

// The columns of a trace CSV that this project writes (`t_ms,<columns>`, numbers only) as
// a time vector and one vector per column; names gets the header's columns after the first.
// Throws hw::Error on a row of another length or a value that is not a number.
void parse_trace_csv(const std::string& text, std::vector<std::string>& names, std::vector<double>& t,
                     std::vector<std::vector<double>>& columns);

}  // namespace hw::io

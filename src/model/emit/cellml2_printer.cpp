// See cellml2_printer.hpp.
#include "model/emit/cellml2_printer.hpp"

#include <sstream>

#include "model/emit/mathml_printer.hpp"
#include "model/emit/units_table.hpp"
#include "model/emit/xml_text.hpp"

namespace hw::model {

namespace {

constexpr const char* kOxmeta = "https://chaste.comlab.ox.ac.uk/cellml/ns/oxford-metadata#";

void write_units(std::ostream& out, const UnitsTable::Definition& d) {
  out << "  <units name=\"" << d.name << "\">\n";
  bool any = false;
  for (int i = 0; i < 7; ++i) {
    if (d.units.dim[i] == 0.0) continue;
    any = true;
    out << "    <unit units=\"" << xml_text::kBaseUnits[i] << "\"";
    if (d.units.dim[i] != 1.0) out << " exponent=\"" << xml_text::number(d.units.dim[i]) << "\"";
    out << "/>\n";
  }
  if (d.units.factor != 1.0 || !any)
    out << "    <unit units=\"dimensionless\" multiplier=\"" << xml_text::number(d.units.factor)
        << "\"/>\n";
  out << "  </units>\n";
}

}  // namespace

std::string print_cellml2(const Model& m) {
  UnitsTable units(cellml2_predefined_units());
  auto units_of = [&](const Symbol& s) {
    std::string n = units.name_for(s);
    return n.empty() ? std::string("dimensionless") : n;
  };
  const std::string name = xml_text::identifier(m.name.empty() ? "model" : m.name);
  const MathmlStyle style{.cn_units = true, .time_csymbol = false};

  // Variables and equations first, so that the units they use are known.
  std::ostringstream vars, math, rdf;
  auto variable = [&](const Symbol& s, const std::string& initial) {
    vars << "    <variable name=\"" << s.name << "\" units=\"" << units_of(s) << "\"";
    if (!initial.empty()) vars << " initial_value=\"" << initial << "\"";
    if (!s.ontology.empty()) {
      vars << " id=\"" << s.name << "\"";
      rdf << "    <rdf:Description rdf:about=\"#" << s.name << "\"><bqbiol:is rdf:resource=\""
          << kOxmeta << xml_text::escape(s.ontology) << "\"/></rdf:Description>\n";
    }
    vars << "/>\n";
  };
  variable(m.time, "");
  for (const auto& s : m.states) variable(s, xml_text::number(s.initial));
  for (const auto& p : m.parameters) variable(p, xml_text::number(p.value));
  for (const auto& a : m.algebraics) variable(a, "");
  for (std::size_t i = 0; i < m.states.size(); ++i)
    math << "      <apply><eq/><apply><diff/><bvar><ci>" << m.time.name << "</ci></bvar><ci>"
         << m.states[i].name << "</ci></apply>" << print_mathml(m, m.derivatives[i], style)
         << "</apply>\n";
  for (const auto& a : m.algebraics)
    math << "      <apply><eq/><ci>" << a.name << "</ci>" << print_mathml(m, a.expr, style)
         << "</apply>\n";

  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<!-- Written by `heartwave model convert`";
  if (!m.source_file.empty()) out << " from " << xml_text::escape(m.source_file);
  out << " (one component; the model as read, before Heartwave's passes). -->\n";
  out << "<model xmlns=\"http://www.cellml.org/cellml/2.0#\" "
         "xmlns:cellml=\"http://www.cellml.org/cellml/2.0#\" name=\""
      << name << "\">\n";
  for (const auto& d : units.definitions()) write_units(out, d);
  out << "  <component name=\"" << name << "\">\n" << vars.str();
  out << "    <math xmlns=\"http://www.w3.org/1998/Math/MathML\">\n" << math.str() << "    </math>\n";
  out << "  </component>\n";
  if (!rdf.str().empty())
    out << "  <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" "
           "xmlns:bqbiol=\"http://biomodels.net/biology-qualifiers/\">\n"
        << rdf.str() << "  </rdf:RDF>\n";
  out << "</model>\n";
  return out.str();
}

}  // namespace hw::model

// See sbml_printer.hpp.
#include "model/emit/sbml_printer.hpp"

#include <sstream>

#include "model/emit/mathml_printer.hpp"
#include "model/emit/units_table.hpp"
#include "model/emit/xml_text.hpp"

namespace hw::model {

namespace {

constexpr const char* kOxmeta = "https://chaste.comlab.ox.ac.uk/cellml/ns/oxford-metadata#";
constexpr const char* kMathNs = "http://www.w3.org/1998/Math/MathML";

void write_units(std::ostream& out, const UnitsTable::Definition& d) {
  out << "      <unitDefinition id=\"" << d.name << "\">\n        <listOfUnits>\n";
  bool any = false;
  for (int i = 0; i < 7; ++i) {
    if (d.units.dim[i] == 0.0) continue;
    any = true;
    out << "          <unit kind=\"" << xml_text::kBaseUnits[i] << "\" exponent=\""
        << xml_text::number(d.units.dim[i]) << "\" scale=\"0\" multiplier=\"1\"/>\n";
  }
  if (d.units.factor != 1.0 || !any)
    out << "          <unit kind=\"dimensionless\" exponent=\"1\" scale=\"0\" multiplier=\""
        << xml_text::number(d.units.factor) << "\"/>\n";
  out << "        </listOfUnits>\n      </unitDefinition>\n";
}

}  // namespace

std::string print_sbml(const Model& m) {
  UnitsTable units(sbml_predefined_units());
  const MathmlStyle style{.cn_units = false, .time_csymbol = true};
  const std::string time_units = units.name_for(m.time);

  std::ostringstream params, rules;
  auto parameter = [&](const Symbol& s, const std::string& value, bool constant) {
    params << "      <parameter id=\"" << s.name << "\"";
    if (!value.empty()) params << " value=\"" << value << "\"";
    if (const std::string u = units.name_for(s); !u.empty()) params << " units=\"" << u << "\"";
    params << " constant=\"" << (constant ? "true" : "false") << "\"";
    if (s.ontology.empty()) {
      params << "/>\n";
      return;
    }
    params << " metaid=\"meta_" << s.name << "\">\n        <annotation><rdf:RDF "
           << "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" "
           << "xmlns:bqbiol=\"http://biomodels.net/biology-qualifiers/\"><rdf:Description "
           << "rdf:about=\"#meta_" << s.name << "\"><bqbiol:is><rdf:Bag><rdf:li rdf:resource=\""
           << kOxmeta << xml_text::escape(s.ontology)
           << "\"/></rdf:Bag></bqbiol:is></rdf:Description></rdf:RDF></annotation>\n"
           << "      </parameter>\n";
  };
  for (const auto& s : m.states) parameter(s, xml_text::number(s.initial), false);
  for (const auto& p : m.parameters) parameter(p, xml_text::number(p.value), true);
  for (const auto& a : m.algebraics) parameter(a, "", false);
  for (std::size_t i = 0; i < m.states.size(); ++i)
    rules << "      <rateRule variable=\"" << m.states[i].name << "\"><math xmlns=\"" << kMathNs
          << "\">" << print_mathml(m, m.derivatives[i], style) << "</math></rateRule>\n";
  for (const auto& a : m.algebraics)
    rules << "      <assignmentRule variable=\"" << a.name << "\"><math xmlns=\"" << kMathNs
          << "\">" << print_mathml(m, a.expr, style) << "</math></assignmentRule>\n";

  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<!-- Written by `heartwave model convert`";
  if (!m.source_file.empty()) out << " from " << xml_text::escape(m.source_file);
  out << " (the model as read, before Heartwave's passes). -->\n";
  out << "<sbml xmlns=\"http://www.sbml.org/sbml/level3/version2/core\" level=\"3\" version=\"2\">\n";
  out << "  <model id=\"" << xml_text::identifier(m.name.empty() ? "model" : m.name) << "\"";
  if (!m.name.empty()) out << " name=\"" << xml_text::escape(m.name) << "\"";
  if (!time_units.empty()) out << " timeUnits=\"" << time_units << "\"";
  out << ">\n";
  if (!m.citation.empty() || !m.documentation.empty()) {
    out << "    <notes><body xmlns=\"http://www.w3.org/1999/xhtml\">";
    if (!m.citation.empty()) out << "<p>" << xml_text::escape(m.citation) << "</p>";
    if (!m.documentation.empty()) out << "<p>" << xml_text::escape(m.documentation) << "</p>";
    out << "</body></notes>\n";
  }
  if (!units.definitions().empty()) {
    out << "    <listOfUnitDefinitions>\n";
    for (const auto& d : units.definitions()) write_units(out, d);
    out << "    </listOfUnitDefinitions>\n";
  }
  if (!params.str().empty()) out << "    <listOfParameters>\n" << params.str() << "    </listOfParameters>\n";
  if (!rules.str().empty()) out << "    <listOfRules>\n" << rules.str() << "    </listOfRules>\n";
  out << "  </model>\n</sbml>\n";
  return out.str();
}

}  // namespace hw::model

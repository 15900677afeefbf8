// See mathml_printer.hpp.
#include "model/emit/mathml_printer.hpp"

#include <cmath>

#include "core/error.hpp"
#include "model/emit/xml_text.hpp"

namespace hw::model {

namespace {

// The MathML operator element of each IR operation that maps to one.
const char* mathml_operator(Op op) {
  switch (op) {
    case Op::add: return "plus";
    case Op::sub: return "minus";
    case Op::mul: return "times";
    case Op::div: return "divide";
    case Op::neg: return "minus";
    case Op::pow: return "power";
    case Op::exp: return "exp";
    case Op::log: return "ln";
    case Op::log10: return "log";
    case Op::sqrt: return "root";
    case Op::abs: return "abs";
    case Op::floor: return "floor";
    case Op::ceil: return "ceiling";
    case Op::sin: return "sin";
    case Op::cos: return "cos";
    case Op::tan: return "tan";
    case Op::asin: return "arcsin";
    case Op::acos: return "arccos";
    case Op::atan: return "arctan";
    case Op::sinh: return "sinh";
    case Op::cosh: return "cosh";
    case Op::tanh: return "tanh";
    case Op::asinh: return "arcsinh";
    case Op::acosh: return "arccosh";
    case Op::atanh: return "arctanh";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::rem: return "rem";
    case Op::lt: return "lt";
    case Op::le: return "leq";
    case Op::gt: return "gt";
    case Op::ge: return "geq";
    case Op::eq: return "eq";
    case Op::ne: return "neq";
    case Op::logical_and: return "and";
    case Op::logical_or: return "or";
    case Op::logical_xor: return "xor";
    case Op::logical_not: return "not";
    case Op::constant:
    case Op::variable:
    case Op::select:
    case Op::piecewise: return nullptr;
  }
  return nullptr;
}

class MathmlWriter {
 public:
  MathmlWriter(const Model& m, const MathmlStyle& style) : m_(m), style_(style) {}

  void expr(ExprId e) {
    const Node& n = m_.pool.node(e);
    switch (n.op) {
      case Op::constant: return constant(n.value);
      case Op::variable: return variable(n.var_kind, n.index);
      case Op::select: {
        const auto a = m_.pool.args(e);
        out_ += "<piecewise><piece>";
        expr(a[1]);
        expr(a[0]);
        out_ += "</piece><otherwise>";
        expr(a[2]);
        out_ += "</otherwise></piecewise>";
        return;
      }
      case Op::piecewise: {
        const auto a = m_.pool.args(e);
        out_ += "<piecewise>";
        for (std::size_t i = 0; i + 1 < a.size(); i += 2) {
          out_ += "<piece>";
          expr(a[i + 1]);
          expr(a[i]);
          out_ += "</piece>";
        }
        out_ += "<otherwise>";
        expr(a.back());
        out_ += "</otherwise></piecewise>";
        return;
      }
      default: break;
    }
    const char* name = mathml_operator(n.op);
    if (!name) throw Error("MathML printer: no MathML for operation " + std::string(op_info(n.op).name));
    out_ += "<apply><";
    out_ += name;
    out_ += "/>";
    for (ExprId a : m_.pool.args(e)) expr(a);
    out_ += "</apply>";
  }

  std::string take() { return std::move(out_); }

 private:
  void constant(double v) {
    if (std::isnan(v)) {
      out_ += "<notanumber/>";
    } else if (std::isinf(v)) {
      out_ += v > 0 ? "<infinity/>" : "<apply><minus/><infinity/></apply>";
    } else {
      out_ += style_.cn_units ? "<cn cellml:units=\"dimensionless\">" : "<cn>";
      out_ += xml_text::number(v);
      out_ += "</cn>";
    }
  }

  void variable(VarKind kind, std::uint32_t index) {
    const std::string& name = m_.variable_name(kind, index);
    if (kind == VarKind::time && style_.time_csymbol) {
      out_ += "<csymbol encoding=\"text\" definitionURL=\"http://www.sbml.org/sbml/symbols/time\">";
      out_ += xml_text::escape(name);
      out_ += "</csymbol>";
      return;
    }
    out_ += "<ci>";
    out_ += xml_text::escape(name);
    out_ += "</ci>";
  }

  const Model& m_;
  const MathmlStyle& style_;
  std::string out_;
};

}  // namespace

std::string print_mathml(const Model& m, ExprId e, const MathmlStyle& style) {
  MathmlWriter w(m, style);
  w.expr(e);
  return w.take();
}

}  // namespace hw::model

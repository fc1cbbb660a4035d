// parse_graph: Graph::to_string's text back into a Graph (golden tests of passes, hand-written IR).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "graph/ir.h"

namespace pj::graph {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) {
    std::istringstream is(text);
    std::string line;
    while (std::getline(is, line)) lines_.push_back(line);
  }

  Graph parse() {
    size_t ln = 0;
    while (ln < lines_.size() && blank(lines_[ln])) ++ln;
    if (ln == lines_.size()) fail(0, "empty text");
    header(ln, lines_[ln]);
    for (++ln; ln < lines_.size(); ++ln) {
      set(lines_[ln], ln);
      skip_ws();
      if (at_end()) continue;
      if (eat("}")) return std::move(g_);
      if (eat("return")) {
        ret();
        continue;
      }
      statement();
    }
    fail(lines_.size(), "missing '}'");
  }

 private:
  static bool blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }
  void set(const std::string& s, size_t ln) {
    s_ = &s;
    pos_ = 0;
    ln_ = ln;
  }
  [[noreturn]] void fail(size_t ln, const std::string& what) {
    PJ_THROW(Value) << "IR line " << ln + 1 << ": " << what;
  }
  [[noreturn]] void fail(const std::string& what) {
    fail(ln_, what + " at column " + std::to_string(pos_ + 1) + ": " + *s_);
  }
  bool at_end() const { return pos_ >= s_->size(); }
  char peek() const { return at_end() ? '\0' : (*s_)[pos_]; }
  void skip_ws() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  bool eat(const char* lit) {
    skip_ws();
    size_t n = std::char_traits<char>::length(lit);
    if (s_->compare(pos_, n, lit) != 0) return false;
    pos_ += n;
    return true;
  }
  void expect(const char* lit) {
    if (!eat(lit)) fail(std::string("expected '") + lit + "'");
  }
  std::string word() {
    skip_ws();
    size_t b = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) ++pos_;
    if (b == pos_) fail("expected a name");
    return s_->substr(b, pos_ - b);
  }
  int64_t integer() {
    skip_ws();
    const char* b = s_->c_str() + pos_;
    char* e = nullptr;
    long long v = std::strtoll(b, &e, 10);
    if (e == b) fail("expected an integer");
    pos_ += e - b;
    return v;
  }
  // A number; *is_real says whether it was written as a real (1.0, 1e3, inf, nan).
  double number(bool* is_real) {
    skip_ws();
    const char* b = s_->c_str() + pos_;
    char* e = nullptr;
    double v = std::strtod(b, &e);
    if (e == b) fail("expected a number");
    std::string tok(b, static_cast<const char*>(e));
    *is_real = tok.find_first_of(".eEnN") != std::string::npos;
    pos_ += e - b;
    return v;
  }
  int value_ref() {
    expect("%");
    int64_t id = integer();
    auto it = ids_.find(id);
    if (it == ids_.end()) fail("%" + std::to_string(id) + " is not defined");
    return it->second;
  }
  void define(int64_t text_id, int id) {
    if (!ids_.emplace(text_id, id).second) fail("%" + std::to_string(text_id) + " defined twice");
  }
  TensorMeta meta() {
    std::string dt = word();
    DType t;
    if (!dtype_from_name(dt, &t)) fail("unknown dtype " + dt);
    expect("[");
    Shape s;
    while (!eat("]")) {
      if (!s.empty()) expect(",");
      s.push_back(integer());
    }
    return {s, t};
  }

  void header(size_t ln, const std::string& line) {
    set(line, ln);
    expect("graph(");
    if (eat(")")) {
      expect("{");
      return;
    }
    // "%0: Float32[2] x, %1: Float32[3] self.w) {": names run to the next ", %" or the final ") {"
    size_t close = s_->rfind(") {");
    if (close == std::string::npos) fail("expected ') {'");
    while (true) {
      expect("%");
      int64_t id = integer();
      expect(":");
      TensorMeta m = meta();
      skip_ws();
      size_t next = s_->find(", %", pos_);
      size_t stop = next == std::string::npos || next > close ? close : next;
      std::string name = s_->substr(pos_, stop - pos_);
      define(id, g_.add_input(m, name));
      pos_ = stop;
      if (stop == close) break;
      expect(",");
    }
    expect(")");
    expect("{");
  }

  void ret() {
    expect("(");
    std::vector<int> outs;
    while (!eat(")")) {
      if (!outs.empty() && !eat(",")) fail("expected ','");
      skip_ws();
      if (peek() == ')') continue;
      outs.push_back(value_ref());
    }
    g_.set_outputs(outs);
    if (!eat("# writes back")) return;
    std::vector<Graph::WriteBack> wbs;
    do {
      const int out = value_ref();
      expect("->");
      const int in = value_ref();
      const auto o = std::find(outs.begin(), outs.end(), out);
      const auto i = std::find(g_.inputs().begin(), g_.inputs().end(), in);
      if (o == outs.end() || i == g_.inputs().end()) fail("a write-back pairs an output with an input");
      wbs.push_back({static_cast<int>(o - outs.begin()), static_cast<int>(i - g_.inputs().begin())});
    } while (eat(","));
    g_.set_write_backs(std::move(wbs));
  }

  AttrValue attr_value() {
    skip_ws();
    if (eat("None")) return std::monostate{};
    if (eat("True")) return true;
    if (eat("False")) return false;
    if (peek() == '\'') {
      size_t end = s_->find('\'', pos_ + 1);
      if (end == std::string::npos) fail("unterminated string");
      std::string v = s_->substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return v;
    }
    if (peek() == '(') {
      ++pos_;
      IntList l;
      while (!eat(")")) {
        if (!l.empty() || eat(",")) eat(",");
        skip_ws();
        if (peek() == ')') continue;
        l.push_back(integer());
      }
      return l;
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) && peek() != 'i' && peek() != 'n') {
      std::string w = word();
      DType t;
      if (!dtype_from_name(w, &t)) fail("unknown attribute value " + w);
      return t;
    }
    bool real = false;
    double v = number(&real);
    if (real) return v;
    return static_cast<int64_t>(v);
  }

  void statement() {
    std::vector<std::pair<int64_t, TensorMeta>> outs;
    do {
      expect("%");
      int64_t id = integer();
      expect(":");
      outs.push_back({id, meta()});
    } while (eat(","));
    expect("=");
    std::string op = word();
    if (op == "constant") {
      if (outs.size() != 1) fail("a constant has one value");
      Tensor t = Tensor::zeros(outs[0].second.shape, outs[0].second.dtype);
      if (eat("(")) {
        for (int64_t i = 0; !eat(")"); ++i) {
          if (i) expect(",");
          if (i >= t.numel()) fail("too many constant values");
          double v;
          if (eat("True")) v = 1;
          else if (eat("False")) v = 0;
          else {
            bool real;
            v = number(&real);
          }
          Tensor one = Tensor::scalar(v, t.dtype());
          std::memcpy(static_cast<char*>(t.raw_data()) + i * itemsize(t.dtype()), one.raw_data(), itemsize(t.dtype()));
        }
      }
      define(outs[0].first, g_.add_const(t));
      return;
    }
    const OpDef* def = find_op(op);
    if (!def) fail("unknown op " + op);
    expect("(");
    std::vector<int> ins;
    while (!eat(")")) {
      if (!ins.empty()) expect(",");
      ins.push_back(value_ref());
    }
    Attrs attrs;
    skip_ws();
    while (!at_end() && peek() != '#') {
      if (!attrs.items().empty()) expect(",");
      std::string k = word();
      expect("=");
      attrs.set(k, attr_value());
      skip_ws();
    }
    int line = 0;
    if (eat("# line")) line = static_cast<int>(integer());
    Metas metas;
    for (auto& o : outs) metas.push_back(o.second);
    Metas in_metas;
    for (int v : ins) in_metas.push_back(g_.value(v).meta);
    Metas inferred = def->infer(in_metas, attrs);
    if (!(inferred == metas) && !def->data_dependent) fail("output metas differ from " + op + "'s inference");
    std::vector<int> ids = g_.add_node(*def, ins, attrs, metas, line);
    for (size_t k = 0; k < outs.size(); ++k) define(outs[k].first, ids[k]);
  }

  std::vector<std::string> lines_;
  const std::string* s_ = nullptr;
  size_t pos_ = 0, ln_ = 0;
  std::map<int64_t, int> ids_;
  Graph g_;
};

}  // namespace

Graph parse_graph(const std::string& text) { return Parser(text).parse(); }

}  // namespace pj::graph

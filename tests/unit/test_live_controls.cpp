// The live view's protocol without a browser: the control messages' parser and checks
// (live/flat_json, live/controls), the token compare, the frame's bytes and layouts, and the
// hub's bounds (live/hub: frames dropped, never queued).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "live/controls.hpp"
#include "live/flat_json.hpp"
#include "live/hub.hpp"
#include "live/server.hpp"
#include "live/view.hpp"

using namespace hw::live;

namespace {

ControlSpace sheet_space() {
  ControlSpace s;
  s.extent = {30, 20, 0.5};
  s.cell = 0.5;
  s.amplitude = 0.7;
  s.amplitude_max = 14;
  s.radius = 2;
  s.radius_max = 7.5;
  s.parameters = {{"conductivity.scale", "conductivity ×", "×", 1, 0.1, 10}, {"time.dt", "dt", "ms", 0.05, 0.0025, 0.1}};
  s.variables = {"V", "v"};
  return s;
}

std::string refusal_of(const std::string& text) {
  std::string why;
  EXPECT_FALSE(parse_control(text, sheet_space(), &why).has_value()) << text;
  return why;
}

}  // namespace

TEST(LiveJson, ParsesAFlatObject) {
  std::string err;
  const auto o = parse_flat_json(R"( {"op":"set", "value": -1.5e-2, "on": true, "n": null, "s":"a\"b\u0041"} )", &err);
  ASSERT_TRUE(o) << err;
  EXPECT_EQ(o->at("op").text, "set");
  EXPECT_DOUBLE_EQ(o->at("value").number, -0.015);
  EXPECT_TRUE(o->at("on").boolean);
  EXPECT_EQ(o->at("n").kind, FlatValue::Kind::null);
  EXPECT_EQ(o->at("s").text, "a\"bA");
}

TEST(LiveJson, RefusesWhatIsNotAFlatObject) {
  for (const char* bad : {"", "[]", "{", "{\"a\":}", "{\"a\":{\"b\":1}}", "{\"a\":[1]}", "{\"a\":1,\"a\":2}",
                          "{\"a\":01}", "{\"a\":1.}", "{\"a\":NaN}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\u00e9\"}",
                          "{\"a\":1} x", "{\"a\":\"x", "{'a':1}"}) {
    std::string err;
    EXPECT_FALSE(parse_flat_json(bad, &err)) << bad;
    EXPECT_NE(err.find("bad control message"), std::string::npos) << bad << ": " << err;
  }
  std::string err;
  EXPECT_FALSE(parse_flat_json("{\"a\":\"" + std::string(5000, 'x') + "\"}", &err));
  EXPECT_NE(err.find("at most 4096"), std::string::npos) << err;
}

TEST(LiveJson, TextReadsBack) {
  FlatObject o;
  o["x"].kind = FlatValue::Kind::number;
  o["x"].number = 0.1 + 0.2;  // needs 17 digits
  o["name"].kind = FlatValue::Kind::string;
  o["name"].text = "a\"b";
  const auto back = parse_flat_json(flat_json_text(o), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->at("x").number, 0.1 + 0.2);
  EXPECT_EQ(back->at("name").text, "a\"b");
}

TEST(LiveControls, AcceptsEachOp) {
  const ControlSpace s = sheet_space();
  std::string why;
  auto c = parse_control(R"({"op":"stimulate","id":7,"x":10,"y":5,"amplitude":1.4})", s, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->op, Control::Op::stimulate);
  EXPECT_EQ(c->id, "7");
  EXPECT_DOUBLE_EQ(c->at[2], 0.25);       // a sheet's one layer
  EXPECT_DOUBLE_EQ(c->radius, 2);          // the default
  EXPECT_DOUBLE_EQ(c->duration, 2);
  for (const char* ok : {R"({"op":"pause"})", R"({"op":"resume"})", R"({"op":"step","count":10})",
                         R"({"op":"speed","value":0})", R"({"op":"set","name":"time.dt","value":0.02})",
                         R"({"op":"view","name":"v"})", R"({"op":"save","name":"before-S2"})",
                         R"({"op":"restore","name":"a_1"})", R"({"op":"probe","x":3,"y":4})"})
    EXPECT_TRUE(parse_control(ok, s, &why)) << ok << ": " << why;
}

TEST(LiveControls, RefusesBadValuesWithAMessage) {
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":1e999,"y":1})").find("finite"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":null,"y":1})").find("must be a number"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":"3","y":1})").find("must be a number"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":31,"y":1})").find("out of range: accepted 0 to 30 mm"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":3,"y":1,"amplitude":1e9})").find("'amplitude'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":3,"y":1,"amplitude":0})").find("stimulates nothing"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":3,"y":1,"radius":0.1})").find("'radius'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","y":1})").find("'x' is missing"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"stimulate","x":1,"file":"/etc/passwd"})").find("takes no key 'file'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"exec","cmd":"rm"})").find("unknown op 'exec'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"set","name":"output.directory","value":1})").find("no parameter"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"set","name":"time.dt","value":0.5})").find("accepted 0.0025 to 0.1 ms"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"step","count":2.5})").find("whole number"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"step","count":1e12})").find("'count'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"speed","value":-1})").find("'value'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"view","name":"Cai"})").find("no field 'Cai'"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"save","name":"../../etc"})").find("letters, digits"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"save","name":""})").find("letters, digits"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"pause","id":{"a":1}})").find("nested"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"op":"pause","id":"a b"})").find("'id'"), std::string::npos);
}

TEST(LiveControls, TheLogsJsonParsesBackTheSame) {
  const ControlSpace s = sheet_space();
  std::string why;
  const auto c = parse_control(R"({"op":"stimulate","x":10.123456789012345,"y":5,"amplitude":-1.3,"radius":1,"duration":0.3})", s, &why);
  ASSERT_TRUE(c) << why;
  const auto back = parse_control(control_json(*c), s, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->at, c->at);
  EXPECT_EQ(back->amplitude, c->amplitude);
  EXPECT_EQ(back->radius, c->radius);
  EXPECT_EQ(back->duration, c->duration);
}

TEST(LiveServer, TokensCompareWholly) {
  const std::string t = random_token();
  EXPECT_EQ(t.size(), 32u);
  EXPECT_NE(t, random_token());
  EXPECT_TRUE(same_token(t, t));
  EXPECT_FALSE(same_token(t, t.substr(0, 31)));
  EXPECT_FALSE(same_token(t + "0", t));
  EXPECT_FALSE(same_token("", ""));
  std::string other = t;
  other[31] = other[31] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(same_token(t, other));
}

TEST(LiveView, LayoutsStayUnderTheBudget) {
  hw::tissue::Grid sheet;
  sheet.n = {400, 400, 1};
  const ViewLayout a = make_layout(sheet);
  ASSERT_EQ(a.panels.size(), 1u);
  EXPECT_EQ(a.panels[0].stride, 2);  // 200² = 40 000 samples
  EXPECT_EQ(a.cells.size(), 40000u);
  hw::tissue::Grid box;
  box.n = {512, 512, 512};
  const ViewLayout b = make_layout(box);
  ASSERT_EQ(b.panels.size(), 4u);  // three slices and the volume
  EXPECT_LE(b.cells.size(), kMaxSamples);
  const Panel& v = b.panels[3];
  EXPECT_TRUE(v.volume);
  EXPECT_EQ(v.stride, 19);  // 27³ = 19 683 samples; 26 cells per side at 20 would leave the budget unused
  EXPECT_LE(std::size_t(v.width) * v.height * v.depth, kMaxVolumeSamples);
  // Its first and last samples: the centres of its first and last blocks.
  const std::size_t first_volume = b.cells.size() - std::size_t(v.width) * v.height * v.depth;
  EXPECT_EQ(b.cells[first_volume], box.index(9, 9, 9));
  EXPECT_EQ(b.cells.back(), box.index(503, 503, 503));
  EXPECT_LE(b.cells.size() * 4, 300000u);  // a frame of a few hundred KB at most
  for (std::size_t n : b.cells) EXPECT_LT(n, box.size());
  // The xy panel's first sample: the centre cell of its first block, on the middle slice.
  EXPECT_EQ(b.cells[0], box.index(b.panels[0].stride / 2, b.panels[0].stride / 2, 256));
}

TEST(LiveView, FrameBytes) {
  const std::vector<float> v{1.5f, -2.f, NAN}, act{3.f, NAN, NAN};
  const std::string f = encode_frame("{\"t\":1}", v, act);
  ASSERT_EQ(f.substr(0, 4), "HWF1");
  std::uint32_t n = 0;
  std::memcpy(&n, f.data() + 4, 4);
  EXPECT_EQ((8 + n) % 4, 0u);
  EXPECT_EQ(f.substr(8, 7), "{\"t\":1}");
  EXPECT_EQ(f.size(), 8 + n + 4 * 6);
  float x[6];
  std::memcpy(x, f.data() + 8 + n, sizeof x);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_TRUE(std::isnan(x[2]));
  EXPECT_EQ(x[3], 3.f);
}

TEST(LiveHub, LatestFrameOnlyAndBoundedQueues) {
  Hub h;
  Hub::Cursor tab;
  h.set_hello("hello");
  for (int i = 0; i < 100; ++i) h.publish_frame(std::make_shared<const std::string>(std::to_string(i)));
  Hub::News n = h.news(tab);
  ASSERT_TRUE(n.frame);
  EXPECT_EQ(*n.frame, "99");  // the frames in between were dropped, not queued
  EXPECT_TRUE(h.news(tab).empty());
  for (int i = 0; i < 200; ++i) h.reply(std::to_string(i));
  n = h.news(tab);
  EXPECT_EQ(n.replies.size(), Hub::kMaxReplies);
  EXPECT_EQ(*n.replies.back(), "199");
  int accepted = 0;
  for (int i = 0; i < 100; ++i) accepted += h.push_control("{}");
  EXPECT_EQ(accepted, int(Hub::kMaxControls));
  EXPECT_EQ(h.take_controls().size(), Hub::kMaxControls);
  EXPECT_TRUE(h.push_control("{}"));
}

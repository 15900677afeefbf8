// A tiny streaming JSON writer for the CLI's --json output and biomarker reports.
//
// Why our own: the only JSON the project emits is flat records of numbers and strings,
// and a Debian package for this alone is not worth the dependency. Non-finite numbers
// become null (JSON has no NaN), so "no repolarisation in this beat" stays valid JSON.
#pragma once

#include <string>
#include <vector>

namespace hw::cell {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(const std::string& k);
  JsonWriter& value(double v);
  JsonWriter& value(long long v);
  JsonWriter& value(int v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(const std::string& v);
  JsonWriter& value(const char* v) { return value(std::string(v)); }
  JsonWriter& null();

  const std::string& str() const { return out_; }

  static std::string escape(const std::string& s);

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace hw::cell

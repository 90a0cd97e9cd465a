#include "pipelines/udf.h"

#include <dlfcn.h>

#include "core/common/error.h"
#include "core/types/schema.h"
#include "pipelines/examples/udf/fld_udf.h"

namespace fld {

namespace {

fld_value ToAbi(const Value& v) {
  fld_value a{};
  a.is_null = v.IsNull() ? 1 : 0;
  a.i = v.i;
  a.d = v.d;
  a.s = v.s.data();
  a.len = v.s.size();
  return a;
}

Value FromAbi(const fld_value& r, const SqlType& type) {
  if (r.is_null) return Value::Null();
  switch (type.phys()) {
    case PhysType::kI64:
      return Value::Int(r.i);
    case PhysType::kF64:
      return Value::Double(type.id == TypeId::kReal ? static_cast<double>(static_cast<float>(r.d)) : r.d);
    case PhysType::kStr:
      return Value::String(r.s ? std::string(r.s, r.len) : std::string());
  }
  return Value::Null();
}

}  // namespace

void LoadUdfs(const std::string& library, const std::string& spec_path, Circuit* circuit) {
  const auto& functions = circuit->external_functions();
  if (functions.empty()) return;
  if (library.empty())
    Fail(ErrorKind::kUsage,
         "{}: function {} is declared without a body, and the spec names no library implementing it (udf: "
         "{{library: PATH}}; see fld-pipeline(5))",
         spec_path, functions.front()->name);
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) Fail(ErrorKind::kUsage, "{}: cannot load the udf library: {}", spec_path, dlerror());
  for (const auto& f : functions) {
    const std::string symbol = "fld_udf_" + ToLower(f->name);
    auto fn = reinterpret_cast<fld_udf_fn>(dlsym(handle, symbol.c_str()));
    if (!fn)
      Fail(ErrorKind::kUsage, "{}: the udf library {} has no function {} (symbol {}) for {}", spec_path, library,
           f->name, symbol, f->name);
    f->impl = [fn, name = f->name, result_type = f->result](std::span<const Value> args) {
      std::vector<fld_value> in;
      in.reserve(args.size());
      for (const Value& v : args) in.push_back(ToAbi(v));
      fld_value out{};
      out.is_null = 1;
      if (fn(in.data(), static_cast<int>(in.size()), &out) != 0)
        Fail(ErrorKind::kRuntime, "function {} failed: {}", name,
             out.s ? std::string(out.s, out.len) : std::string("(no message)"));
      return FromAbi(out, result_type);
    };
  }
}

}  // namespace fld

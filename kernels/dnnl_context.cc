#include "kernels/dnnl_context.h"

#include <cstdlib>
#include <new>

#include "common/check.h"
#include "kernels/blocked_layout.h"

namespace pj {

dnnl::engine& dnnl_engine() {
  static dnnl::engine* e = [] {
    // oneDNN keeps a cache of its own (1024 primitives by default): bounded like pijit's, so
    // primitives pijit's cache dropped are not all kept alive there.
    if (!std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY"))
      dnnl::set_primitive_cache_capacity(static_cast<int>(PrimitiveCache::instance().capacity()));
    // oneDNN announces each kernel it generates to VTune by default, and to find VTune's collector
    // it searches the library path for libJitPI.so on the first one (~130 us of a first call, ~70
    // failed opens). VTune names its collector in INTEL_JIT_PROFILER64 when it profiles: only then,
    // or when the user set oneDNN's own switch, is the announcing left on.
    if (!std::getenv("DNNL_JIT_PROFILE") && !std::getenv("ONEDNN_JIT_PROFILE") && !std::getenv("INTEL_JIT_PROFILER64"))
      dnnl_set_jit_profiling_flags(DNNL_JIT_PROFILE_NONE);
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *e;
}

dnnl::stream& dnnl_stream() {
  thread_local dnnl::stream s(dnnl_engine());
  return s;
}

dnnl::primitive_attr scratchpad_attr(dnnl::primitive_attr attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* thread_scratch_buffer(size_t bytes, int slot) {
  // One buffer per thread and slot, grown to the largest need; used only while one kernel runs.
  struct Buffer {
    void* p = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer bufs[kNumScratchSlots];
  PJ_CHECK(slot >= 0 && slot < kNumScratchSlots) << "thread_scratch_buffer: slot " << slot;
  Buffer& buf = bufs[slot];
  if (buf.size < bytes) {
    std::free(buf.p);
    buf.size = (bytes + 4095) / 4096 * 4096;
    buf.p = std::aligned_alloc(64, buf.size);
    if (!buf.p) {
      buf.size = 0;
      throw std::bad_alloc();
    }
  }
  return buf.p;
}

dnnl::memory thread_slot_memory(dnnl::memory* mem, const dnnl::memory::desc& md, int slot, bool reuse) {
  void* p = thread_scratch_buffer(md.get_size(), slot);
  if (!reuse) return dnnl::memory(md, dnnl_engine(), p);
  if (!*mem) *mem = dnnl::memory(md, dnnl_engine(), p);
  else mem->set_data_handle(p);
  return *mem;
}

dnnl::memory thread_scratchpad(const dnnl::primitive& prim) {
  const_dnnl_primitive_desc_t pd = nullptr;
  dnnl::error::wrap_c_api(dnnl_primitive_get_primitive_desc(prim.get(), &pd), "scratchpad: primitive desc");
  const dnnl_memory_desc_t* md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  const size_t bytes = md ? dnnl_memory_desc_get_size(md) : 0;
  if (bytes == 0) return dnnl::memory();
  return dnnl::memory(dnnl::memory::desc(*md), dnnl_engine(), thread_scratch_buffer(bytes));
}

void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args) {
  if (dnnl::memory scratch = thread_scratchpad(prim)) args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
  prim.execute(dnnl_stream(), args);
  dnnl_stream().wait();
}

void execute_reorder(const dnnl::reorder& r, const dnnl::memory& src, const dnnl::memory& dst) {
  if (blocked_layout_reorder(src, dst)) return;  // (one piece of code for every shape)
  execute(r, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
}

const dnnl::memory& BoundArgs::at(const dnnl::memory::desc& md, const void* ptr) {
  for (auto& [d, m] : mems_)
    if (d == &md) {
      dnnl::error::wrap_c_api(dnnl_memory_set_data_handle(m.get(), const_cast<void*>(ptr)), "bind a buffer");
      return m;
    }
  mems_.emplace_back(&md, dnnl::memory(md, dnnl_engine(), const_cast<void*>(ptr)));
  return mems_.back().second;
}

void BoundArgs::execute(const dnnl::primitive& prim, std::initializer_list<std::pair<int, const dnnl::memory*>> args) {
  if (!scratch_known_) {
    if (dnnl::memory sp = thread_scratchpad(prim)) {
      scratch_bytes_ = sp.get_desc().get_size();
      scratch_ = dnnl::memory(sp.get_desc(), dnnl_engine(), DNNL_MEMORY_NONE);
    }
    scratch_known_ = true;
  }
  dnnl_exec_arg_t a[8];
  int n = 0;
  for (const auto& [arg, mem] : args) {
    if (!mem) continue;
    PJ_CHECK(n < 7) << "BoundArgs::execute: too many arguments";
    a[n++] = {arg, mem->get()};
  }
  if (scratch_bytes_) {
    dnnl::error::wrap_c_api(dnnl_memory_set_data_handle(scratch_.get(), thread_scratch_buffer(scratch_bytes_)),
                            "bind the scratchpad");  // this thread's
    a[n++] = {DNNL_ARG_SCRATCHPAD, scratch_.get()};
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), dnnl_stream().get(), n, a), "execute");
  dnnl_stream().wait();
}

PrimitiveCache& PrimitiveCache::instance() {
  static PrimitiveCache* c = new PrimitiveCache();
  return *c;
}

dnnl::memory::dims to_dnnl_dims(const int64_t* shape, int n) {
  if (n == 0) return {1};
  return dnnl::memory::dims(shape, shape + n);
}

}  // namespace pj

#include "comm/device_link.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::comm {

namespace {

// NCCL's C interface as its stable ABI gives it (nccl.h, NCCL 2.x): an opaque
// communicator, a 128-byte unique id, an int result (0: success) and int data types.
struct NcclComm;
using ncclComm_t = NcclComm*;
struct ncclUniqueId {
  char internal[128];
};
using ncclResult_t = int;
constexpr int kNcclInt8 = 0, kNcclUint64 = 5, kNcclMin = 3;

struct Nccl {
  void* lib = nullptr;
  ncclResult_t (*get_version)(int*) = nullptr;
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*send)(const void*, std::size_t, int, int, ncclComm_t, void*) = nullptr;
  ncclResult_t (*recv)(void*, std::size_t, int, int, ncclComm_t, void*) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, std::size_t, int, int, ncclComm_t, void*) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, std::size_t, int, int, ncclComm_t, void*) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
  const char* (*error_string)(ncclResult_t) = nullptr;
};

// Loads NCCL once; lib null with the reason when it is not there.
const Nccl& nccl(std::string& why) {
  static std::string reason;
  static const Nccl n = [] {
    Nccl x;
    std::vector<std::string> names;
    if (const char* e = std::getenv("HEARTWAVE_NCCL"); e && *e) names.push_back(e);
    for (const char* s : {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"}) names.push_back(s);
    std::string tried;
    for (const std::string& name : names) {
      x.lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (x.lib) break;
      // The loader's reason for a file that is there (a missing dependency, a newer glibc).
      const char* e = ::dlerror();
      const bool there = name.find('/') != std::string::npos && ::access(name.c_str(), R_OK) == 0;
      tried += (tried.empty() ? "" : ", ") + name + (there && e ? std::string(" (") + e + ")" : "");
    }
    if (!x.lib) {
      reason = fmt::format("NCCL not found (tried {}; set HEARTWAVE_NCCL to libnccl.so.2's path)", tried);
      return x;
    }
    bool ok = true;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(x.lib, name));
      ok = ok && fn;
    };
    get(x.get_version, "ncclGetVersion");
    get(x.get_unique_id, "ncclGetUniqueId");
    get(x.comm_init_rank, "ncclCommInitRank");
    get(x.comm_destroy, "ncclCommDestroy");
    get(x.send, "ncclSend");
    get(x.recv, "ncclRecv");
    get(x.broadcast, "ncclBroadcast");
    get(x.all_reduce, "ncclAllReduce");
    get(x.group_start, "ncclGroupStart");
    get(x.group_end, "ncclGroupEnd");
    get(x.error_string, "ncclGetErrorString");
    if (!ok) {
      reason = "the NCCL library found lacks ncclSend/ncclRecv (NCCL 2.7 or later is needed)";
      ::dlclose(x.lib);
      x.lib = nullptr;
    }
    return x;
  }();
  why = reason;
  return n;
}

class NcclLink final : public DeviceLink {
 public:
  NcclLink(const Nccl& n, Communicator& host) : n_(n), rank_(host.rank()) {
    ncclUniqueId id{};
    if (host.rank() == 0) check(n_.get_unique_id(&id), "ncclGetUniqueId");
    host.broadcast(&id, sizeof id, 0);
    check(n_.comm_init_rank(&comm_, host.size(), id, host.rank()), "ncclCommInitRank");
    int v = 0;
    n_.get_version(&v);
    // 2.9.6 → 20906 (from 2.9 on; before, 1000·major + 100·minor + patch)
    version_ = v >= 10000 ? fmt::format("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100)
                          : fmt::format("NCCL {}.{}.{}", v / 1000, v / 100 % 10, v % 100);
  }
  ~NcclLink() override {
    if (comm_) n_.comm_destroy(comm_);
  }

  std::string describe() const override { return version_; }

  void exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& receives, void* stream) override {
    // Per pair of ranks NCCL matches sends and receives in the order they are queued: both
    // sides queue them by tag.
    auto by_tag = [](std::vector<Transfer> t) {
      std::stable_sort(t.begin(), t.end(), [](const Transfer& a, const Transfer& b) { return a.tag < b.tag; });
      return t;
    };
    const std::vector<Transfer> s = by_tag(sends), r = by_tag(receives);
    check(n_.group_start(), "ncclGroupStart");
    for (const Transfer& t : s)
      if (t.bytes) check(n_.send(t.data, t.bytes, kNcclInt8, t.peer, comm_, stream), "ncclSend");
    for (const Transfer& t : r)
      if (t.bytes) check(n_.recv(t.data, t.bytes, kNcclInt8, t.peer, comm_, stream), "ncclRecv");
    check(n_.group_end(), "ncclGroupEnd");
  }

  void allgather(void* data, const std::vector<std::size_t>& offset, const std::vector<std::size_t>& count,
                 void* stream) override {
    // One broadcast per rank's range, in place, grouped: ranges of any size (ncclAllGather
    // wants equal ones).
    char* p = static_cast<char*>(data);
    check(n_.group_start(), "ncclGroupStart");
    for (std::size_t r = 0; r < offset.size(); ++r)
      if (count[r])
        check(n_.broadcast(p + offset[r], p + offset[r], count[r], kNcclInt8, int(r), comm_, stream), "ncclBroadcast");
    check(n_.group_end(), "ncclGroupEnd");
  }

  void allreduce_min(unsigned long long* data, std::size_t n, void* stream) override {
    check(n_.all_reduce(data, data, n, kNcclUint64, kNcclMin, comm_, stream), "ncclAllReduce");
  }

 private:
  void check(ncclResult_t r, const char* what) const {
    if (r != 0)
      throw Error(fmt::format("{} failed on rank {}: {} (NCCL_DEBUG=WARN says more)", what, rank_, n_.error_string(r)));
  }

  const Nccl& n_;
  int rank_ = 0;
  ncclComm_t comm_ = nullptr;
  std::string version_;
};

}  // namespace

std::unique_ptr<DeviceLink> make_nccl_link(Communicator& host, std::string* why_not) {
  std::string why;
  const Nccl& n = nccl(why);
  // Every rank must know whether all found NCCL: one without it makes all stage.
  double have = n.lib ? 1 : 0;
  host.allreduce(&have, 1, Reduce::min);
  if (have == 0) {
    if (why_not) *why_not = n.lib ? "NCCL is missing on another rank" : why;
    return nullptr;
  }
  // NVLink multicast (NVLS) serves collectives this engine does not use; on shared hosts
  // it can take the GPUs out of service, so it stays off unless the user turned it on.
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  return std::make_unique<NcclLink>(n, host);
}

}  // namespace hw::comm

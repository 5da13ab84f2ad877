// make bench-check: the fast kernels (FastDot) against the reference stage path (dot()) on N
// random samples per preset and per binary16-output variant (check_fast: exponent-mantissa
// normal and subnormal ranges, independent bits, cancelling pairs, specials injected).
// Usage: bench_check [N per datapath = 10^7] [filter: parts of "arch/type variant", comma-separated]
//                    [threads = all]
// Exit 0 when every sample agrees, 1 on any mismatch (the first one is printed with its stages).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "matcore/fast.hpp"
#include "matcore/presets.hpp"

using namespace mc;

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000ull;
  const std::string only = argc > 2 ? argv[2] : "";
  unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  std::vector<Datapath> dps;
  // the filter: comma-separated parts, a datapath is checked when "name variant" contains one
  auto wanted = [&](const Datapath& dp) {
    if (only.empty()) return true;
    const std::string label = dp.name() + " " + dp.variant;
    size_t at = 0;
    while (at <= only.size()) {
      const size_t end = std::min(only.find(',', at), only.size());
      const std::string part = only.substr(at, end - at);
      if (!part.empty() && label.find(part) != std::string::npos) return true;
      at = end + 1;
    }
    return false;
  };
  for (const Datapath& dp : all_presets()) {
    if (!wanted(dp)) continue;
    dps.push_back(dp);
    if (dp.half_out) {
      try {  // the binary16-output instruction of the input type
        dps.push_back(find_preset(dp.arch, dp.type, "fp16", dp.variant));
      } catch (const std::invalid_argument&) {
      }
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t total = 0, bad = 0;
  std::printf("| datapath | kernel | samples | with specials | mismatches |\n|---|---|---|---|---|\n");
  for (const Datapath& dp : dps) {
    // split the samples into `threads` seeds; each part is its own deterministic stream
    std::vector<FastCheck> part(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, t] { part[t] = check_fast(dp, n / threads + (t < n % threads), 1000u + t); });
    for (auto& th : ts) th.join();
    FastCheck r;
    for (const FastCheck& p : part) {
      r.samples += p.samples;
      r.specials += p.specials;
      r.mismatches += p.mismatches;
      if (r.first.empty()) r.first = p.first;
    }
    std::printf("| %s%s%s | %s | %llu | %llu | %llu |\n", dp.name().c_str(),
                dp.variant.empty() ? "" : (" " + dp.variant).c_str(),
                dp.out_fmt == kBinary16 ? " -> fp16" : "", FastDot(dp).strategy(),
                static_cast<unsigned long long>(r.samples), static_cast<unsigned long long>(r.specials),
                static_cast<unsigned long long>(r.mismatches));
    if (r.mismatches) std::printf("\nFIRST MISMATCH\n%s\n", r.first.c_str());
    std::fflush(stdout);
    total += r.samples;
    bad += r.mismatches;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\n%zu datapaths, %llu samples, %llu mismatches, %.0f s\n", dps.size(),
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(bad), s);
  return bad ? 1 : 0;
}

// Internal to feature detection: the Emitter, which builds the probe samples of one format
// combination (features_probes.cpp, features_probes_late.cpp), and the probe families defined in
// features_probes_late.cpp. docs/features.md describes every probe.
#pragma once
#include <string>
#include <vector>

#include "matcore/features.hpp"
#include "matcore/vectors.hpp"
#include "features_common.hpp"

namespace mc::feat {

class Emitter {
 public:
  struct Smp {
    std::vector<uint64_t> a, b;
    uint64_t c = 0;
    bool ok = true;
  };
  Emitter(FeatureVectors& v, const Geo& g) : v_(v), g(g) {}

  Smp blank() const {
    Smp s;
    s.a.assign(g.K, zero_bits(g.A, false));
    s.b.assign(g.K, zero_bits(g.B, false));
    s.c = zero_bits(g.O, false);
    return s;
  }
  /// a_slot * b_slot = p exactly.
  void prod(Smp& s, int slot, const Val& p, bool allow_sub = false) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    if (!split_product(g.A, g.B, p, allow_sub, s.a[slot], s.b[slot])) s.ok = false;
  }
  /// a = fa * 2^?, b = fb * 2^? with product fa*fb*2^e (fa, fb odd significands).
  void prod2(Smp& s, int slot, u128 fa, u128 fb, int e, bool neg) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    if (!pair_product(g.A, g.B, fa, fb, e, neg, false, s.a[slot], s.b[slot])) s.ok = false;
  }
  void raw(Smp& s, int slot, uint64_t a, uint64_t b) const {
    if (slot < 0 || slot >= g.K) { s.ok = false; return; }
    s.a[slot] = a;
    s.b[slot] = b;
  }
  void c(Smp& s, const Val& x, bool allow_sub = false) const {
    if (!encode(g.O, x, s.c, allow_sub)) s.ok = false;
  }
  void cbits(Smp& s, uint64_t bits) const { s.c = bits; }
  /// Adds the sample if every value of it was constructible.
  void emit(const std::string& name, const Smp& s) {
    if (!s.ok) return;
    v_.a.insert(v_.a.end(), s.a.begin(), s.a.end());
    v_.b.insert(v_.b.end(), s.b.begin(), s.b.end());
    v_.c.push_back(s.c);
    v_.probe.push_back(name);
  }

 private:
  FeatureVectors& v_;

 public:
  const Geo& g;
};

inline uint64_t one_bits(const Format& f, bool neg) {
  uint64_t r = 0;
  encode(f, p2(0, neg), r);
  return r;
}

// The probe families of features_probes_late.cpp (the late c-aligner's round-downs, c alone, a
// cancelled tiny sum, unnormalised and rounded products, the floors, overflow).
void emit_acc(Emitter& em);
void emit_c_alone(Emitter& em);
void emit_cancel_tiny(Emitter& em);
void emit_prodnorm(Emitter& em);
void emit_prodround(Emitter& em);
void emit_floors(Emitter& em);
void emit_prodoverflow(Emitter& em);
void emit_overflow(Emitter& em);

}  // namespace mc::feat

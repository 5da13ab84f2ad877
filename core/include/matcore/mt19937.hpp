// matcore: the Mersenne Twister MT19937 stream of std::mt19937, generated a block at a time.
//
// The sample files of `matcore sample` are defined by the std::mt19937 stream (seed 0 by default;
// section 5.1 of the paper). This class produces exactly that stream (tb/test_sampling.cpp checks
// it against std::mt19937 for several seeds), but twists the 624-word state and tempers the
// outputs in whole-block loops the compiler vectorises, instead of tempering one word per call:
// the sequential random stream is the one part of sampling that cannot run on several cores.
//
//   state mt[0..623] --twist--> mt' --temper--> out[0..623], consumed in order
//   twist:  y = (mt[i] & 0x80000000) | (mt[i+1] & 0x7fffffff)
//           mt'[i] = mt[i+397] ^ (y >> 1) ^ (y odd ? 0x9908b0df : 0)      (indices mod 624)
//   temper: y ^= y>>11; y ^= (y<<7) & 0x9d2c5680; y ^= (y<<15) & 0xefc60000; y ^= y>>18
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mc {

class Mt19937 {
 public:
  static constexpr int kN = 624, kM = 397;
  explicit Mt19937(uint32_t seed = 5489u) {
    mt_[0] = seed;
    for (int i = 1; i < kN; ++i)
      mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
    pos_ = kN;
  }
  uint32_t operator()() {
    if (pos_ == kN) refill();
    return out_[pos_++];
  }
  /// The next n words of the stream into dst (the same words as n calls).
  void generate(uint32_t* dst, size_t n) {
    while (n) {
      if (pos_ == kN) refill();
      const size_t take = n < static_cast<size_t>(kN - pos_) ? n : static_cast<size_t>(kN - pos_);
      std::memcpy(dst, out_ + pos_, take * sizeof(uint32_t));
      pos_ += static_cast<int>(take);
      dst += take;
      n -= take;
    }
  }

 private:
  static uint32_t mix(uint32_t cur, uint32_t next, uint32_t far) {
    const uint32_t y = (cur & 0x80000000u) | (next & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
  }
  void refill() {
    uint32_t* mt = mt_;
    // 227 = 4 * 56 + 3: the first 224 in a loop of a multiple of 4 (vectorised at -O2 too)
    for (int i = 0; i < 224; ++i) mt[i] = mix(mt[i], mt[i + 1], mt[i + kM]);
    for (int i = 224; i < kN - kM; ++i) mt[i] = mix(mt[i], mt[i + 1], mt[i + kM]);
    for (int i = kN - kM; i < kN - 1; ++i) mt[i] = mix(mt[i], mt[i + 1], mt[i + kM - kN]);
    mt[kN - 1] = mix(mt[kN - 1], mt[0], mt[kM - 1]);
    for (int i = 0; i < kN; ++i) {
      uint32_t y = mt[i];
      y ^= y >> 11;
      y ^= (y << 7) & 0x9d2c5680u;
      y ^= (y << 15) & 0xefc60000u;
      y ^= y >> 18;
      out_[i] = y;
    }
    pos_ = 0;
  }
  uint32_t mt_[kN];
  uint32_t out_[kN];
  int pos_;
};

}  // namespace mc

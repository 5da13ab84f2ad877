#include "matcore/wide.hpp"

#include <stdexcept>

namespace mc {

void Wide::reset(int lsb_exp, int nbits) {
  lsb_ = lsb_exp;
  n_ = (nbits + 2 + 63) / 64 + 1;  // one spare limb for carries and the sign
  if (n_ > kMaxLimbs) throw std::length_error("Wide: range of terms too large");
  for (int i = 0; i < n_; ++i) l_[i] = 0;
}

namespace {
/// mag << sh (sh in 0..63) spread over three 64-bit limbs.
void spread(u128 mag, int sh, uint64_t parts[3]) {
  parts[0] = static_cast<uint64_t>(mag << sh);
  const u128 hi = sh ? mag >> (64 - sh) : mag >> 64;
  parts[1] = static_cast<uint64_t>(hi);
  parts[2] = sh ? static_cast<uint64_t>(hi >> 64) : 0;
}
}  // namespace

void Wide::add_mag(u128 mag, int bit) {
  const int li = bit / 64;
  uint64_t parts[3];
  spread(mag, bit % 64, parts);
  unsigned carry = 0;
  for (int k = 0; li + k < n_; ++k) {
    const uint64_t add = k < 3 ? parts[k] : 0;
    if (k >= 3 && !carry) break;
    const uint64_t a = l_[li + k];
    uint64_t s = a + add;
    unsigned c1 = s < a;
    uint64_t s2 = s + carry;
    unsigned c2 = s2 < s;
    l_[li + k] = s2;
    carry = c1 | c2;
  }
}

void Wide::sub_mag(u128 mag, int bit) {
  const int li = bit / 64;
  uint64_t parts[3];
  spread(mag, bit % 64, parts);
  unsigned borrow = 0;
  for (int k = 0; li + k < n_; ++k) {
    const uint64_t sub = k < 3 ? parts[k] : 0;
    if (k >= 3 && !borrow) break;
    const uint64_t a = l_[li + k];
    uint64_t d = a - sub;
    unsigned b1 = a < sub;
    uint64_t d2 = d - borrow;
    unsigned b2 = d < static_cast<uint64_t>(borrow);
    l_[li + k] = d2;
    borrow = b1 | b2;
  }
}

void Wide::add(bool neg, u128 mag, int exp) {
  if (mag == 0) return;
  const int bit = exp - lsb_;
  if (bit < 0 || bit + msb_index(mag) >= (n_ - 1) * 64)
    throw std::logic_error("Wide::add: term outside the accumulator range");
  if (neg) sub_mag(mag, bit);
  else add_mag(mag, bit);
}

bool Wide::is_zero() const {
  for (int i = 0; i < n_; ++i)
    if (l_[i]) return false;
  return true;
}

Exact Wide::to_exact() const {
  std::array<uint64_t, kMaxLimbs> m{};
  const bool neg = negative();
  // magnitude = neg ? -x : x
  unsigned carry = 1;
  for (int i = 0; i < n_; ++i) {
    if (neg) {
      const uint64_t s = ~l_[i] + carry;
      carry = (carry && s == 0) ? 1 : 0;
      m[i] = s;
    } else {
      m[i] = l_[i];
    }
  }
  Exact e;
  e.sign = neg;
  int top = -1;
  for (int i = n_ - 1; i >= 0; --i)
    if (m[i]) { top = i * 64 + 63 - __builtin_clzll(m[i]); break; }
  if (top < 0) { e.mag = 0; e.lsb_exp = lsb_; return e; }
  // Take bits [top-123, top]
  const int low = top - 123 > 0 ? top - 123 : 0;
  u128 mag = 0;
  for (int b = top; b >= low;) {
    // gather per limb for speed
    const int li = b / 64;
    const int lo_in_limb = (low > li * 64) ? low - li * 64 : 0;
    const int hi_in_limb = b - li * 64;
    const int cnt = hi_in_limb - lo_in_limb + 1;
    const uint64_t chunk = (m[li] >> lo_in_limb) & (cnt == 64 ? UINT64_MAX : ((uint64_t{1} << cnt) - 1));
    mag = (mag << cnt) | chunk;
    b -= cnt;
  }
  bool sticky = false;
  for (int b = 0; b < low && !sticky; b += 64) {
    const int li = b / 64;
    const int hi = (low - li * 64) >= 64 ? 64 : low - li * 64;
    const uint64_t mask = hi == 64 ? UINT64_MAX : ((uint64_t{1} << hi) - 1);
    sticky = (m[li] & mask) != 0;
  }
  e.mag = mag;
  e.lsb_exp = lsb_ + low;
  e.sticky = sticky;
  return e;
}

}  // namespace mc

// matcore-sc: the stage modules. Each is an SC_MODULE with typed ports whose clocked process
// calls the pure stage functions of core (stages.hpp) and writes its output register: the
// arithmetic exists once, in core; here are only registers, wiring and control.
//
//   Stage<In, Out>:   clk ─┐
//                     ctl ─┤  (the control word of the group now at the stage input)
//                     in  ─┴─► compute() = core stage call ─► [reg] ─► out
//
// A stage computes only for valid groups; its register holds its value through bubbles.
#pragma once
#include <systemc>

#include <deque>
#include <functional>
#include <vector>

#include "matcore/datapath.hpp"
#include "matcore_sc/buses.hpp"

namespace mcsc {

template <class In, class Out>
struct Stage : sc_core::sc_module {
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<Ctl> ctl{"ctl"};
  sc_core::sc_in<In> in{"in"};
  sc_core::sc_out<Out> out{"out"};
  SC_HAS_PROCESS(Stage);
  Stage(sc_core::sc_module_name nm, const mc::Datapath& dp) : sc_core::sc_module(nm), dp_(dp) {
    SC_METHOD(tick);
    sensitive << clk.pos();
    dont_initialize();
  }
  virtual void compute(const Ctl& c, const In& x, Out& y) = 0;

 protected:
  const mc::Datapath& dp_;

 private:
  void tick() {
    const Ctl& c = ctl.read();
    if (!c.valid) return;
    Out y;
    compute(c, in.read(), y);
    y.seq = c.seq;
    out.write(y);
  }
};

/// Control register of one stage (ctl[k] = ctl[k-1]).
struct CtlReg : sc_core::sc_module {
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<Ctl> in{"in"};
  sc_core::sc_out<Ctl> out{"out"};
  SC_HAS_PROCESS(CtlReg);
  explicit CtlReg(sc_core::sc_module_name nm) : sc_core::sc_module(nm) {
    SC_METHOD(tick);
    sensitive << clk.pos();
    dont_initialize();
  }
  void tick() { out.write(in.read()); }
};

/// Specials detector: the control register of stage 2. resolve_specials over the products and
/// c, the datapath's special result bits and the sign of an exact zero. An infinity that the
/// pairwise tree must resolve itself (special_at_inputs) is not decided here.
struct Specials : sc_core::sc_module {
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<Ctl> in{"in"};
  sc_core::sc_in<ProductBus> prod{"prod"};
  sc_core::sc_out<Ctl> out{"out"};
  SC_HAS_PROCESS(Specials);
  Specials(sc_core::sc_module_name nm, const mc::Datapath& dp);
  void tick();

 private:
  const mc::Datapath& dp_;
};

/// Multiplier array: decode_operand (a, b, c), multiply per lane, addend for c.
struct Multiplier : Stage<OperandBus, ProductBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const OperandBus& x, ProductBus& y) override;
};

/// Aligner: align_exponent (e_max, emin_lim) and align_term (truncate / RD) per lane, with a
/// sticky bit of the dropped bits. early_c: c is one more lane (c_zero_exp for c = 0).
/// interleave 2: odd and even lanes aligned to their own e_max.
struct Aligner : Stage<ProductBus, AlignBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, AlignBus& y) override;
};

/// Multi-term adder tree of the aligned lanes (the sum of two's complement integers at one
/// binary point). interleave 2: the odd and the even partial sums.
struct AdderTree : Stage<AlignBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const AlignBus& x, AccBus& y) override;
};

/// Odd-even recombination: both partial sums shifted to the larger e_max with RD to
/// partial_frac bits (shift_to) and added.
struct OddEven : Stage<AccBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const AccBus& x, AccBus& y) override;
};

/// c-aligner with round-down (late c): c_align; the normalisation of the e_c > e_max branch
/// is the next stage.
struct CAligner : Stage<AccBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const AccBus& x, AccBus& y) override;
};

/// Subnormal-aware normaliser with round-down (normalise_rd to acc_frac), for the branch where
/// the product sum was shifted to c.
struct Normaliser : Stage<AccBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const AccBus& x, AccBus& y) override;
};

/// Exact accumulator (Kulisch; CDNA1, SFMA): exact_sum_round's exact sum of products and c.
struct ExactAdder : Stage<ProductBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, AccBus& y) override;
};

/// One level of the pairwise adder tree (CDNA2): fl(t[2i] + t[2i+1]) with exact_sum_round in
/// out_fmt (its rounding and FTZ); an odd term passes to the next level.
struct PairLevel : Stage<ProductBus, ProductBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, ProductBus& y) override;
};

/// Final two-term addition of the pairwise tree: fl(c + tree).
struct PairCAdd : Stage<ProductBus, AccBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, AccBus& y) override;
};

/// Rounder (RNE or the preset's mode): round_fixed / round_to_format to out_fmt, or the
/// specials' bits.
struct Rounder : Stage<AccBus, ResultBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const AccBus& x, ResultBus& y) override;
};

/// Final c addition (c_final_add): after the last group, d = fl(acc + c) with c_final_round.
struct CFinal : Stage<ResultBus, ResultBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ResultBus& x, ResultBus& y) override;
};

/// Block scales (ST-FDPA): every product times its block's alpha * beta (scale_product,
/// scale_term); the scales pass on.
struct Scaler : Stage<ProductBus, ProductBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, ProductBus& y) override;
};

/// Group sums (GST-FDPA): every G products summed exactly and scaled (group_term); the lanes
/// of the output are the groups, aligned at their scale exponents by the next stage.
struct Grouper : Stage<ProductBus, ProductBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ProductBus& x, ProductBus& y) override;
};

/// Output converter: the result widened to the stored width (binary16 -> binary32).
struct OutConv : Stage<ResultBus, ResultBus> {
  using Stage::Stage;
  void compute(const Ctl& c, const ResultBus& x, ResultBus& y) override;
};

/// One dot product to run: a, b (K values, a_fmt / b_fmt) and c (out_fmt), as mc::dot takes.
struct Job {
  uint32_t tag = 0;
  std::vector<uint64_t> a, b;
  uint64_t c = 0;
  std::vector<uint64_t> sa, sb;  ///< block scales (ceil(K / scale_block) each); empty: 1.0
};

/// Issue stage and scheduler. Every cycle it launches one group: the next group of the oldest
/// in-flight sample whose previous group has left the rounder (its result is that group's c),
/// or else the first group of a new sample while fewer than `window` samples are in flight.
/// Groups of independent samples therefore fill the pipeline; a sample's own groups are
/// serialised by the c dependency.
struct Issue : sc_core::sc_module {
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<Ctl> fb_ctl{"fb_ctl"};          ///< rounder output: group results
  sc_core::sc_in<ResultBus> fb_res{"fb_res"};
  sc_core::sc_in<Ctl> fin_ctl{"fin_ctl"};        ///< last stage: finished samples
  sc_core::sc_in<ResultBus> fin_res{"fin_res"};
  sc_core::sc_out<Ctl> ctl_out{"ctl_out"};
  sc_core::sc_out<OperandBus> out{"out"};
  SC_HAS_PROCESS(Issue);
  Issue(sc_core::sc_module_name nm, const mc::Datapath& dp, int window);

  void push(Job j);
  bool busy() const { return !queue_.empty() || !inflight_.empty(); }
  /// Called for every finished sample: (tag, d in out_fmt, d widened to the stored width).
  std::function<void(uint32_t, uint64_t, uint64_t)> on_done;
  uint64_t issued() const { return seq_; }
  void set_window(int w) { window_ = w; }

 private:
  struct Entry {
    Job job;
    int next = 0;        ///< next group index
    int groups = 1;
    bool waiting = false;
    uint64_t acc = 0;    ///< the c of the next group
  };
  void tick();
  void launch(Entry& e);
  const mc::Datapath& dp_;
  int window_;
  std::deque<Job> queue_;
  std::vector<Entry> inflight_;
  uint64_t seq_ = 0;
  Ctl bubble_;
};

}  // namespace mcsc

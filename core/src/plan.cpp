#include "matcore/plan.hpp"

namespace mc {

const char* to_string(StageKind k) {
  switch (k) {
    case StageKind::Issue: return "issue";
    case StageKind::Multiplier: return "multiplier";
    case StageKind::Aligner: return "aligner";
    case StageKind::Adder: return "adder";
    case StageKind::OddEven: return "oddeven";
    case StageKind::CAdd: return "cadd";
    case StageKind::Normaliser: return "normaliser";
    case StageKind::Exact: return "exact adder";
    case StageKind::PairLevel: return "pair level";
    case StageKind::PairCAdd: return "pair c addition";
    case StageKind::Rounder: return "rounder";
    case StageKind::CFinal: return "cfinal";
    case StageKind::OutConv: return "outconv";
  }
  return "?";
}

std::vector<PlannedStage> plan(const Datapath& dp) {
  std::vector<PlannedStage> p{{"issue", StageKind::Issue, 0}, {"multiplier", StageKind::Multiplier, 0}};
  switch (dp.adder) {
    case AdderKind::Exact:
      p.push_back({"adder", StageKind::Exact, 0});
      break;
    case AdderKind::Pairwise:
      for (int d = 0; (1 << d) < dp.n_fma; ++d) p.push_back({"adder_l" + std::to_string(d), StageKind::PairLevel, d});
      p.push_back({"cadd", StageKind::PairCAdd, 0});
      break;
    case AdderKind::Fused:
    default:
      p.push_back({"aligner", StageKind::Aligner, 0});
      p.push_back({"adder", StageKind::Adder, 0});
      if (dp.late_c) {
        if (dp.interleave == 2) p.push_back({"oddeven", StageKind::OddEven, 0});
        p.push_back({"cadd", StageKind::CAdd, 0});
        p.push_back({"normaliser", StageKind::Normaliser, 0});
      }
      break;
  }
  p.push_back({"rounder", StageKind::Rounder, 0});
  if (dp.c_final_add) p.push_back({"cfinal", StageKind::CFinal, 0});
  if (!(dp.out_fmt == kBinary32) && !(dp.out_fmt == kBinary64)) p.push_back({"outconv", StageKind::OutConv, 0});
  return p;
}

std::string plan_diagram(const Datapath& dp) {
  std::string s;
  for (const PlannedStage& st : plan(dp)) s += (s.empty() ? "" : " -> ") + st.name;
  return s;
}

}  // namespace mc

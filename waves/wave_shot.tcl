# Headless GTKWave screenshot (timer-driven script; see shared/spec/toolchain-notes.md, section 3):
#   SHOT_PNG=out.png [SHOT_T0=0 SHOT_T1=300] xvfb-run -a -s "-screen 0 1600x900x24" \
#     gtkwave --rcvar "splash_disable on" -R waves/wave_shot.tcl -P 500 TRACE.vcd waves/cdna3.gtkw
if {![info exists ::n]} { set ::n 0 }
incr ::n
if {$::n == 1} {
  if {[info exists ::env(SHOT_T0)]} { gtkwave::setZoomRangeTimes $::env(SHOT_T0) $::env(SHOT_T1) } \
  else { gtkwave::/Time/Zoom/Zoom_Full }
} elseif {$::n >= 3 && ![info exists ::done]} {
  set ::done 1
  exec import -window root $::env(SHOT_PNG)
  gtkwave::/File/Quit
}

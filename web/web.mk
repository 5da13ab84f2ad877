# The web page (web/, docs/web.md): the core compiled with Debian's emscripten into a static site.
#   make web   -> build-web/index.html, build-web/matcore.js, build-web/matcore.wasm
# Included by the top Makefile. Objects in build-web/obj (incremental, -MMD header dependencies).
# emscripten 3.1.6 with Node 20 needs NODE_PATH=/usr/share/nodejs (../shared/spec/toolchain-notes.md).
WEB_BUILD ?= build-web
WEB_OBJ := $(WEB_BUILD)/obj
EMXX ?= em++
# The core's layers the page needs: formats and stages, the datapath (fields, presets, files,
# plan), the reference model, the vector readers, the paper tables and the SVG; the probe
# vectors for the lessons. Threads, MPI, the RTL driver and the fast kernels stay out.
WEB_CORE := core/src/numerics/format.cpp core/src/numerics/wide.cpp core/src/numerics/exact.cpp \
  core/src/numerics/stages.cpp core/src/datapath/fields.cpp core/src/datapath/presets.cpp \
  core/src/datapath/plan.cpp core/src/datapath/datapath_file.cpp core/src/datapath/instructions.cpp \
  core/src/engines/model.cpp core/src/io/vectors.cpp core/src/io/output.cpp core/src/io/svg.cpp core/src/io/table.cpp \
  core/src/tools/sample.cpp core/src/tools/features_probes.cpp core/src/tools/features_probes_late.cpp
WEB_SRCS := $(WEB_CORE) web/api.cpp web/lessons.cpp
WEB_OBJS := $(patsubst %.cpp,$(WEB_OBJ)/%.o,$(WEB_SRCS))
WEB_CXXFLAGS := -std=c++17 -O2 -fexceptions -Wall -Wno-unused-command-line-argument \
  -Icore/include -Icore/src -Icore -isystem $(WEB_BUILD)/inc -MMD -MP
WEB_LDFLAGS := -O2 --bind -fexceptions -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web,node \
  -sEXPORT_NAME=matcoreModule -sMODULARIZE=1 -sEXIT_RUNTIME=0 \
  --embed-file tb/vectors/paper_cdna1.pvt@/vectors/paper_cdna1.pvt \
  --embed-file tb/vectors/paper_cdna2.pvt@/vectors/paper_cdna2.pvt \
  --embed-file tb/vectors/paper_cdna3.pvt@/vectors/paper_cdna3.pvt

.PHONY: web web-serve
# deps: a fresh machine gets emscripten from scripts/install-deps.sh first
web: deps $(WEB_BUILD)/index.html $(WEB_BUILD)/matcore.js

$(WEB_BUILD)/inc/toml++:
	@mkdir -p $(WEB_BUILD)/inc
	ln -sfn /usr/include/toml++ $@

$(WEB_OBJ)/%.o: %.cpp | $(WEB_BUILD)/inc/toml++
	@mkdir -p $(dir $@)
	NODE_PATH=/usr/share/nodejs $(EMXX) $(WEB_CXXFLAGS) -c $< -o $@

$(WEB_BUILD)/matcore.js: $(WEB_OBJS) tb/vectors/paper_cdna1.pvt tb/vectors/paper_cdna2.pvt tb/vectors/paper_cdna3.pvt
	NODE_PATH=/usr/share/nodejs $(EMXX) $(WEB_LDFLAGS) $(WEB_OBJS) -o $(WEB_BUILD)/matcore.tmp.js
	mv $(WEB_BUILD)/matcore.tmp.wasm $(WEB_BUILD)/matcore.wasm
	sed 's/matcore\.tmp\.wasm/matcore.wasm/g' $(WEB_BUILD)/matcore.tmp.js > $(WEB_BUILD)/matcore.tmp2.js
	cat web/app.js >> $(WEB_BUILD)/matcore.tmp2.js
	rm -f $(WEB_BUILD)/matcore.tmp.js && mv $(WEB_BUILD)/matcore.tmp2.js $@

$(WEB_BUILD)/matcore.js: web/app.js

$(WEB_BUILD)/index.html: web/index.html
	@mkdir -p $(WEB_BUILD)
	cp $< $@.tmp && mv $@.tmp $@

# Serves the site on http://localhost:8000 (a separate .wasm is fetched, which browsers refuse
# from file://).
web-serve: web
	cd $(WEB_BUILD) && /usr/bin/python3 -m http.server 8000

-include $(WEB_OBJS:.o=.d)

# nnsim/sim.mk - the simulated Android NNAPI library, $(BUILD)/lib/libneuralnetworks.so (SONAME
# libneuralnetworks.so): nnsim/*.c plus core/requant.c (the gemmlowp arithmetic), linked with the version
# script sim.map, so that only the ANeuralNetworks* functions and parity_nnapi_sim_* are exported. Not a parity backend: not in exec/backends.def. Included from the Makefile.
#
# Also: $(BUILD)/tests/nnapi_client (tests/nnapi_client.c), a client that knows only the NNAPI header and dlopens
# "libneuralnetworks.so" (LD_LIBRARY_PATH=$(BUILD)/lib); tests/test_nnapi_sim.c, test_nnapi_sim_contract.c,
# test_nnapi_sim_ops.c, test_nnapi_sim_quant.c and test_nnapi_sim_ops2.c link the library directly, and the first
# runs the client under valgrind. make install puts the library in $(PREFIX)/lib and the headers in
# $(PREFIX)/include/android/ and $(PREFIX)/include/parity/.
NNSIM_DIR  := nnsim
NNSIM_SRC  := $(wildcard $(NNSIM_DIR)/*.c) core/requant.c
NNSIM_OBJ  := $(patsubst %.c,$(BUILD)/nnsim/%.o,$(NNSIM_SRC))
NNSIM_LIB  := $(BUILD)/lib/libneuralnetworks.so
NNSIM_INC  := -Ibackends/nnapi/include -I$(NNSIM_DIR) -Icore
NNSIM_CLIENT := $(BUILD)/tests/nnapi_client

all: $(NNSIM_LIB) $(NNSIM_CLIENT)

$(BUILD)/nnsim/%.o: %.c $(NNSIM_DIR)/sim.mk
	@mkdir -p $(dir $@)
	$(Q)$(call msg,CC,nnsim/$*.o)$(CC) -D_GNU_SOURCE -I. $(NNSIM_INC) -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -MMD -MP \
	  -c $< -o $@

$(NNSIM_LIB): $(NNSIM_OBJ) $(NNSIM_DIR)/sim.map
	@mkdir -p $(dir $@)
	$(Q)$(call msg,LD,$@)$(CC) -shared -Wl,-soname,libneuralnetworks.so -Wl,--version-script=$(NNSIM_DIR)/sim.map \
	  -Wl,--no-undefined $(SANFLAGS) $(NNSIM_OBJ) -o $@ -lm

$(NNSIM_CLIENT): tests/nnapi_client.c backends/nnapi/include/android/NeuralNetworks.h
	@mkdir -p $(dir $@)
	$(Q)$(call msg,CCLD,$@)$(CC) -Ibackends/nnapi/include -std=c11 $(OPT) $(WARN) $(SANFLAGS) $< -o $@ -ldl

NNSIM_TESTS := $(BUILD)/tests/test_nnapi_sim $(BUILD)/tests/test_nnapi_sim_contract $(BUILD)/tests/test_nnapi_sim_ops \
               $(BUILD)/tests/test_nnapi_sim_quant $(BUILD)/tests/test_nnapi_sim_ops2
$(NNSIM_TESTS): $(NNSIM_LIB) $(NNSIM_CLIENT)
$(NNSIM_TESTS): CPPFLAGS += $(NNSIM_INC)
$(NNSIM_TESTS): LDLIBS += -L$(BUILD)/lib -lneuralnetworks -Wl,-rpath,'$$ORIGIN/../lib'

.PHONY: nnsim-install
install: nnsim-install
nnsim-install: $(NNSIM_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib/parity $(DESTDIR)$(PREFIX)/include/parity/android
	install -m 755 $(NNSIM_LIB) $(DESTDIR)$(PREFIX)/lib/parity/libneuralnetworks.so
	install -m 644 backends/nnapi/include/android/NeuralNetworks.h $(DESTDIR)$(PREFIX)/include/parity/android/
	install -m 644 $(NNSIM_DIR)/parity_nnapi_sim.h $(DESTDIR)$(PREFIX)/include/parity/

-include $(shell find $(BUILD)/nnsim -name '*.d' 2>/dev/null)

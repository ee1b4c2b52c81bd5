# tests/plugins/plugins.mk - the test plugins of tests/test_exec.c (and test_ties.c): every tests/plugins/<name>.c becomes
# $(BUILD)/tests/plugins/<name>.so, built like a backend plugin (the public header only). Included from the Makefile.
TEST_PLUGIN_SRC := $(wildcard tests/plugins/*.c)
TEST_PLUGINS    := $(TEST_PLUGIN_SRC:tests/plugins/%.c=$(BUILD)/tests/plugins/%.so)

all: $(TEST_PLUGINS)

$(BUILD)/tests/plugins/%.so: tests/plugins/%.c tests/plugins/tp_common.h core/parity_backend.h
	@mkdir -p $(dir $@)
	$(Q)$(call msg,LD,$@)$(CC) -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -shared -Icore $< -o $@ -lm

# planted.c, decoder.c and int4.c wrap the example backend, linked in whole with its entry renamed
# (tests/report/test_planted.sh, tests/report/test_decoder.sh, tests/report/test_int4.sh).
$(BUILD)/tests/plugins/planted.so $(BUILD)/tests/plugins/decoder.so \
$(BUILD)/tests/plugins/int4.so: $(BUILD)/tests/plugins/%.so: tests/plugins/%.c tests/plugins/ex_wrap.h \
    $(wildcard backends/example/*.c backends/example/*.h) core/parity_backend.h
	@mkdir -p $(dir $@)
	$(Q)$(call msg,LD,$@)$(CC) -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -shared -Icore -Ibackends/example \
	  -Dparity_backend_entry=par_example_entry $(filter %.c,$^) -o $@ -lm

# stride2.c and chan8.c are offbyone.c with another planted bug.
$(BUILD)/tests/plugins/stride2.so $(BUILD)/tests/plugins/chan8.so: tests/plugins/offbyone.c

# test_exec and test_ftz load them from the folder beside their own executable; test_campaign fuzzes one.
$(BUILD)/tests/test_exec: | $(TEST_PLUGINS)
# test_ties runs build/parity with tieaway.so.
$(BUILD)/tests/test_ties: | $(TEST_PLUGINS)
$(BUILD)/tests/test_ftz: | $(TEST_PLUGINS)
# test_reduce runs offbyone.so and the example plugin, and build/parity reduce; test_campaign fuzzes toggle.so.
$(BUILD)/tests/test_reduce: | $(TEST_PLUGINS) $(EXAMPLE_PLUGIN) $(EXE)
$(BUILD)/tests/test_campaign: | $(TEST_PLUGINS) $(EXE)

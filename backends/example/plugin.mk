# backends/example/plugin.mk - a marker: the Makefile builds every backends/<name>/ that has a plugin.mk into
# $(BUILD)/plugins/libparity_<name>.so from that folder's *.c, with only core/parity_backend.h on the include path.
# Nothing needs to be set here.

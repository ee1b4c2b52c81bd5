# backends/runner/builtin.mk - runtimes under test through a runner process (docs/runners.md): ort, litert and the
# generic runner[cmd=...]. No library: the runtimes live in their runners (build/venv, made by make deps); a runner
# whose runtime is missing makes its backend unusable with the reason. Built everywhere.
BUILTIN_SRC += backends/runner/runner.c backends/runner/rt_wire.c

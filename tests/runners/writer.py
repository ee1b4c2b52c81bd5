# writer.py: a relu runner that, before each answer, tries to write where the harness keeps its files: a new file
# and the start of every file already there, in each folder of TP_WRITER_DIRS (colon-separated: the reference
# cache, the output folder), and a file in /tmp; then a file in its own temporary folder (TMPDIR). It prints on
# stderr what it could write. Run under the sandbox, nothing of the harness's changes (parity: PASS, the cache, the
# output folder and /tmp as they were) and its own folder takes the file.
import os, sys
from hostile import Base, serve


def try_write(path, mode):
    try:
        with open(path, mode) as f:
            f.write("WRITTEN-BY-A-RUNNER")
        print("writer: wrote %s" % path, file=sys.stderr)
    except OSError as e:
        print("writer: cannot write %s: %s" % (path, e.strerror), file=sys.stderr)


class Writer(Base):
    def run(self, inputs):
        for d in filter(None, os.environ.get("TP_WRITER_DIRS", "").split(":")):
            try_write(os.path.join(d, "planted-by-runner"), "w")
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if os.path.isfile(os.path.join(d, name)):
                    try_write(os.path.join(d, name), "r+")
        try_write("/tmp/parity-writer-%s" % os.environ.get("TP_WRITER_TAG", "x"), "w")
        try_write(os.path.join(os.environ.get("TMPDIR", "/nonexistent"), "own-file"), "w")
        return super().run(inputs)


serve(Writer())

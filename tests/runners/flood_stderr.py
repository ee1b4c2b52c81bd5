# flood_stderr.py: writes 100 MB to stderr during run, then answers correctly (max(x, 0)).
import sys
from hostile import Base, serve


class FloodStderr(Base):
    def run(self, inputs):
        chunk = "e" * (1 << 20)
        for _ in range(100):
            sys.stderr.write(chunk)
        sys.stderr.flush()
        return super().run(inputs)


serve(FloodStderr())

# flood_stdout.py: writes 100 MB of garbage without a newline onto the protocol stream during run.
import os
from hostile import RAW_STDOUT, Base, serve


class FloodStdout(Base):
    def run(self, inputs):
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            os.write(RAW_STDOUT, chunk)
        return super().run(inputs)


serve(FloodStdout())

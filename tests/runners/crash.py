# crash.py: kills itself with SIGSEGV during run (parity: a CRASH with signal 11).
import os, signal
from hostile import Base, serve


class Crash(Base):
    def run(self, inputs):
        os.kill(os.getpid(), signal.SIGSEGV)


serve(Crash())

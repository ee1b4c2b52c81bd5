# crash_second.py: a correct relu runner that kills itself with SIGSEGV at the second model it is asked to load, so
# every other case of a process crashes: the one case is a CRASH, and the next case, on a fresh runner, passes.
import os, signal
from hostile import Base, serve


class CrashSecond(Base):
    loads = 0

    def load(self, fmt, model):
        self.loads += 1
        if self.loads == 2:
            os.kill(os.getpid(), signal.SIGSEGV)


serve(CrashSecond())

# garbage.py: answers run with a line that is not JSON (on the protocol stream, before its real reply).
import os
from hostile import RAW_STDOUT, Base, serve


class Garbage(Base):
    def run(self, inputs):
        os.write(RAW_STDOUT, b"this is not JSON\n")
        return super().run(inputs)


serve(Garbage())

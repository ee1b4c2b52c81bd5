# big_output.py: answers run with a well-framed 100 MB output (float32 [26214400]) where the case's output is 252
# floats: its blob size is refused before a byte of it is read.
import numpy as np
from hostile import Base, serve


class BigOutput(Base):
    def run(self, inputs):
        return [np.zeros(25 << 20, dtype=np.float32)]


serve(BigOutput())

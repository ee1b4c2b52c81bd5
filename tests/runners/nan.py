# nan.py: answers run with NaN everywhere, in the right dtype and shape.
import numpy as np
from hostile import Base, serve


class Nan(Base):
    def run(self, inputs):
        return [np.full_like(inputs[0], np.nan)]


serve(Nan())

# wrong_shape.py: answers run with max(x, 0) as one column ([N, 1]): the same bytes, another shape.
from hostile import Base, serve


class WrongShape(Base):
    def run(self, inputs):
        return [super().run(inputs)[0].reshape(-1, 1)]


serve(WrongShape())

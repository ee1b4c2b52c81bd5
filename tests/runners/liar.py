# liar.py: correct outputs (max(x, 0)), but claims run_ms 1e9 (more than any round trip).
from hostile import Base, serve


class Liar(Base):
    def run(self, inputs):
        return super().run(inputs), 1e9


serve(Liar())

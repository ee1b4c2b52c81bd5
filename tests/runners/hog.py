# hog.py: a relu runner that holds 600 MiB (touched) during run before answering: its memory counts with the backend
# child's against --mem-limit (parity: a CRASH "out of memory ... its companion process's included").
from hostile import Base, serve


class Hog(Base):
    def run(self, inputs):
        self.held = bytearray(600 << 20)
        for i in range(0, len(self.held), 4096):
            self.held[i] = 1
        import time
        time.sleep(2)
        return super().run(inputs)


serve(Hog())

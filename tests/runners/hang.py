# hang.py: never answers run (it sleeps forever): parity times the job out.
import time
from hostile import Base, serve


class Hang(Base):
    def run(self, inputs):
        while True:
            time.sleep(3600)


serve(Hang())

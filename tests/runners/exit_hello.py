# exit_hello.py: exits with status 3 on hello, before answering it.
import os
from hostile import Base, serve


class ExitHello(Base):
    def hello(self, options):
        os._exit(3)


serve(ExitHello())

# slowstart.py: a runtime slow to import: 5 s (PARITY_SLOWSTART_S) before it reads hello, then relu.
import os, time
from hostile import Base, serve

time.sleep(float(os.environ.get("PARITY_SLOWSTART_S", "5")))
serve(Base())

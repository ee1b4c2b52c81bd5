# relu.py: the control: a correct runner for single-relu cases (max(x, 0) on input 0).
from hostile import Base, serve

serve(Base())

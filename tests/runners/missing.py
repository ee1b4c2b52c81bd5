# missing.py: its runtime is not installed: hello imports a module that does not exist (unsupported).
from hostile import Base, Unsupported, serve


class Missing(Base):
    def hello(self, options):
        try:
            import parity_no_such_runtime  # noqa: F401
        except ImportError as e:
            raise Unsupported(f"{e} (make deps installs it)")
        return super().hello(options)


serve(Missing())

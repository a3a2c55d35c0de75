"""gradviz: see every gradient of your custom backward, beside the default and a numeric reference.

Importing gradviz loads neither torch, tensorflow nor Qt: user op modules import it for `gradviz.op`.
"""

from gradviz.api import op

__version__ = "0.1.0"
__all__ = ["op", "__version__"]

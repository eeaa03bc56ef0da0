"""HTTP plumbing shared by every route: errors, bodies, identity, logging."""

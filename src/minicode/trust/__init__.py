"""What minicode trusts, and why: a project's config file (`project_config`) and the workspace's
rules file (`rules_file`), each confirmation kept one way (`record`)."""

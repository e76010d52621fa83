"""Models of the AWS events the functions consume, parsed at the handler's edge."""

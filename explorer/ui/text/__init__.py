"""The text box and the token strip with its chips."""

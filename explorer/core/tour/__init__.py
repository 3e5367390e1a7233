"""The guided tour's steps and what each says, computed from the table it opens. No Qt here."""

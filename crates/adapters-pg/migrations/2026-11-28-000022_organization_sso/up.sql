-- An organization's single sign-on to the console through its OpenID Connect provider: the
-- issuer, the client and its secret, the claim that names a user, the groups that may sign
-- in, and whether tokens and links still open the console. None: no single sign-on.
ALTER TABLE organizations ADD COLUMN sso jsonb;

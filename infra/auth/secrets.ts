// The credential helpers live with the commands that issue credentials; adapters and tests import them from here too.
export { constantTimeEqual, dummyPasswordHash, hashPassword, randomSecret, sha256, verifyPassword } from '../../commands/users-credentials.js';

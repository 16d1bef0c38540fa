import type { RouteEntry } from '../routes';
import { AuthCallbackPage } from './callback';
import { DevicePage } from './device';
import { ForgotPasswordPage } from './forgot-password';
import { InvitationPage } from './invitation';
import { RegisterPage } from './register';
import { ResetPasswordPage } from './reset-password';
import { SignInPage } from './sign-in';
import { VerifyEmailPage } from './verify-email';

/** The pages the API's links point to (mails, flowctl, social sign-in), and signing in. */
export const authRoutes: RouteEntry[] = [
  { path: '/sign-in', component: SignInPage, public: true },
  { path: '/register', component: RegisterPage, public: true },
  { path: '/forgot-password', component: ForgotPasswordPage, public: true },
  { path: '/reset-password', component: ResetPasswordPage, public: true },
  { path: '/verify-email', component: VerifyEmailPage, public: true },
  // Public: signed out, it offers signing in or registering and comes back.
  { path: '/invitations/:token', component: InvitationPage, public: true },
  { path: '/auth/callback', component: AuthCallbackPage, public: true },
  // Needs a session: the app sends a signed-out person to sign in and back, `?user_code=` kept.
  { path: '/cli/device', component: DevicePage },
];
